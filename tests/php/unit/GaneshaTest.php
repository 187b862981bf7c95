<?php
declare(strict_types=1);

use Breakerd\Ganesha;
use Breakerd\Segment;
use Breakerd\Testing\FakeClock;
use PHPUnit\Framework\TestCase;

final class GaneshaTest extends TestCase
{
    private string $shm;
    private FakeClock $clock;
    private Segment $seg;

    protected function setUp(): void
    {
        $this->shm = brk_test_shm('ganesha');
        $this->clock = new FakeClock();
        $this->seg = Segment::attach($this->shm, 64, $this->clock);
    }

    protected function tearDown(): void
    {
        Segment::unlink($this->shm);
    }

    public function testCountStrategyShape(): void
    {
        $g = new Ganesha($this->seg, ['failureCountThreshold' => 3, 'intervalToHalfOpen' => 5]);
        for ($i = 0; $i < 3; $i++) {
            $this->assertTrue($g->isAvailable('http://api.example'));
            $g->failure('http://api.example');
        }
        $this->assertFalse($g->isAvailable('http://api.example'));
        $this->clock->advance(5.5);
        // half-open: one probe for every user of the segment
        $this->assertTrue($g->isAvailable('http://api.example'));
        $other = new Ganesha($this->seg);
        $this->assertFalse($other->isAvailable('http://api.example'));
        $g->success('http://api.example');
        $this->assertTrue($other->isAvailable('http://api.example'));
        $other->success('http://api.example');
        $this->assertSame('closed', $g->breaker('http://api.example')->state());
        $this->assertSame('http:/api.example', Ganesha::name('http://api.example'));
    }

    public function testRateStrategyOptionsMap(): void
    {
        $g = new Ganesha($this->seg, ['failureRateThreshold' => 50, 'timeWindow' => 30,
                                      'minimumRequests' => 10, 'intervalToHalfOpen' => 5]);
        $c = $g->breaker('svc')->info()['config'];
        $this->assertSame(50, $c['failure_rate_pct']);
        $this->assertSame(30000, $c['window_ms']);
        $this->assertSame(10, $c['min_calls']);
        $this->assertSame(5000, $c['open_ms']);
        $this->expectException(\ValueError::class);
        (new Ganesha($this->seg, ['adapter' => 'apcu']))->breaker('x');
    }

    public function testAnUnreportedIsAvailableIsCancelled(): void
    {
        $g = new Ganesha($this->seg, ['failureCountThreshold' => 1]);
        $this->assertTrue($g->isAvailable('svc'));
        $br = $g->breaker('svc');
        unset($g);
        $this->assertSame(1, $br->info()['counters']['cancelled']);
    }
}

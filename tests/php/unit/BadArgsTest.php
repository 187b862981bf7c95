<?php
declare(strict_types=1);

use Breakerd\Segment;
use Breakerd\Testing\FakeClock;
use PHPUnit\Framework\TestCase;

/** Bad arguments throw ValueError/TypeError naming the argument, with
 * nothing in the segment changed. */
final class BadArgsTest extends TestCase
{
    private string $shm;
    private Segment $seg;

    protected function setUp(): void
    {
        $this->shm = brk_test_shm('args');
        $this->seg = Segment::attach($this->shm, 64, new FakeClock());
    }

    protected function tearDown(): void
    {
        Segment::unlink($this->shm);
    }

    private function assertThrowsNaming(string $class, string $needle, callable $fn): void
    {
        $used = $this->seg->info()['used'];
        try {
            $fn();
            $this->fail("no $class");
        } catch (\Throwable $e) {
            $this->assertInstanceOf($class, $e, $e->getMessage());
            $this->assertStringContainsString($needle, $e->getMessage());
        }
        $this->assertSame($used, $this->seg->info()['used'], 'a record was created');
    }

    public function testSettings(): void
    {
        $this->assertThrowsNaming(\ValueError::class, 'unknown setting "treshold"',
            fn() => $this->seg->breaker('a', ['treshold' => 3]));
        $this->assertThrowsNaming(\TypeError::class, 'key "failure_threshold" must be of type int',
            fn() => $this->seg->breaker('a', ['failure_threshold' => '3']));
        $this->assertThrowsNaming(\ValueError::class, '"failure_threshold" => 0: must be 1..',
            fn() => $this->seg->breaker('a', ['failure_threshold' => 0]));
        $this->assertThrowsNaming(\ValueError::class, 'key "open" "soon" is not a duration',
            fn() => $this->seg->breaker('a', ['open' => 'soon']));
        $this->assertThrowsNaming(\ValueError::class, 'bad setting "max_open"',
            fn() => $this->seg->breaker('a', ['open' => '10s', 'max_open' => '5s']));
        $this->assertThrowsNaming(\ValueError::class, 'slow_',
            fn() => $this->seg->breaker('a', ['slow_call' => '1s']));
        $this->assertThrowsNaming(\ValueError::class, 'key "failure_rate" must be a percentage',
            fn() => $this->seg->breaker('a', ['failure_rate' => 150]));
        $this->assertThrowsNaming(\TypeError::class, 'key "fleet" must be of type bool',
            fn() => $this->seg->breaker('a', ['fleet' => 1]));
        $this->assertThrowsNaming(\TypeError::class, '"concurrency_auto" => true',
            fn() => $this->seg->breaker('a', ['max_concurrent' => 'auto']));
        $this->assertThrowsNaming(\TypeError::class, 'key "concurrency_auto" must be of type bool',
            fn() => $this->seg->breaker('a', ['concurrency_auto' => 1]));
        $this->assertThrowsNaming(\ValueError::class, '"min_concurrent" => 9: must be 1..max_concurrent',
            fn() => $this->seg->breaker('a', ['concurrency_auto' => true, 'max_concurrent' => 8,
                                              'min_concurrent' => 9]));
        $this->assertThrowsNaming(\ValueError::class, 'Argument #2 ($settings)',
            fn() => $this->seg->breaker('a', [3]));
    }

    public function testNamesAndValues(): void
    {
        $this->assertThrowsNaming(\ValueError::class, 'Argument #1 ($name)',
            fn() => $this->seg->breaker('bad name!'));
        $this->assertThrowsNaming(\ValueError::class, 'Argument #2 ($rate)',
            fn() => $this->seg->bucket('k', 0.0, 1));
        $this->assertThrowsNaming(\ValueError::class, 'Argument #3 ($burst)',
            fn() => $this->seg->bucket('k', 1.0, 0));
        $this->assertThrowsNaming(\ValueError::class, 'Argument #1 ($shm)',
            fn() => Segment::attach('no-slash'));
        $br = $this->seg->breaker('ok');
        $p = $br->acquire();
        $this->assertThrowsNaming(\ValueError::class, 'Argument #1 ($reason)',
            fn() => $p->failure('broken'));
        $this->assertThrowsNaming(\ValueError::class, 'Argument #1 ($status)',
            fn() => $p->reportHttp(1000));
        $this->assertThrowsNaming(\TypeError::class, 'Argument #1 ($fn)',
            fn() => $br->call('no_such_function'));
        $this->assertFalse($p->isReleased());
        $this->assertTrue($p->success());
    }

    /** @dataProvider madeByTheExtension */
    public function testOnlyTheExtensionMakesTheHandles(string $class): void
    {
        $this->expectException(\Error::class);
        $this->expectExceptionMessage("Call to private $class::__construct()");
        new $class();
    }

    public static function madeByTheExtension(): array
    {
        return array_map(fn($c) => [$c], ['Breakerd\\Segment', 'Breakerd\\Breaker', 'Breakerd\\Permit',
            'Breakerd\\Admission', 'Breakerd\\Bucket', 'Breakerd\\Pace', 'Breakerd\\PaceToken', 'Breakerd\\Budget']);
    }
}

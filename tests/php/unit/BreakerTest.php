<?php
declare(strict_types=1);

use Breakerd\CircuitOpen;
use Breakerd\Cooling;
use Breakerd\Refused;
use Breakerd\Segment;
use Breakerd\Testing\FakeClock;
use PHPUnit\Framework\TestCase;

final class BreakerTest extends TestCase
{
    private string $shm;
    private FakeClock $clock;
    private Segment $seg;

    protected function setUp(): void
    {
        $this->shm = brk_test_shm('br');
        $this->clock = new FakeClock();
        $this->seg = Segment::attach($this->shm, 64, $this->clock);
    }

    protected function tearDown(): void
    {
        Segment::unlink($this->shm);
    }

    public function testCallReturnsTheValueAndCountsASuccess(): void
    {
        $br = $this->seg->breaker('api', ['failure_threshold' => 3]);
        $this->assertSame(42, $br->call(fn(int $a, int $b) => $a * $b, 6, 7));
        $this->assertSame(1, $br->info()['counters']['successes']);
    }

    public function testThresholdOpensAndRefusalCarriesWaitCauseBreaker(): void
    {
        $br = $this->seg->breaker('api', ['failure_threshold' => 3, 'open' => '2s']);
        for ($i = 0; $i < 3; $i++) {
            $this->assertTrue($br->acquire()->failure('timeout'));
        }
        $this->assertSame('open', $br->state());
        try {
            $br->call(fn() => $this->fail('must not run'));
            $this->fail('not refused');
        } catch (CircuitOpen $e) {
            $this->assertInstanceOf(Refused::class, $e);
            $this->assertInstanceOf(\RuntimeException::class, $e);
            $this->assertSame('open', $e->getCause());
            $this->assertSame('api', $e->getBreaker());
            $this->assertGreaterThanOrEqual(2.0, $e->getWait());
            $this->assertLessThanOrEqual(2.5, $e->getWait());
        }
        $this->assertSame(3, $br->info()['counters']['failures_by_reason']['timeout']);
    }

    public function testOneProbeThenRecoveryCloses(): void
    {
        $br = $this->seg->breaker('api', ['failure_threshold' => 1, 'open' => '1s']);
        $br->acquire()->failure();
        $this->clock->advance(1.5);
        $probe = $br->acquire();
        try {
            $br->acquire();
            $this->fail('a second probe was admitted');
        } catch (CircuitOpen $e) {
            $this->assertSame('probes_busy', $e->getCause());
        }
        $this->assertTrue($probe->success());
        $this->assertSame('closed', $br->state());
    }

    public function testAnExceptionIsAFailureAndIsRethrown(): void
    {
        $br = $this->seg->breaker('api');
        try {
            $br->call(function () { throw new \RuntimeException('down'); });
            $this->fail('not rethrown');
        } catch (\RuntimeException $e) {
            $this->assertSame('down', $e->getMessage());
        }
        $c = $br->info()['counters'];
        $this->assertSame(1, $c['failures']);
        $this->assertSame(1, $c['failures_by_reason']['other']);
    }

    public function testAnErrorOrAnotherRefusalInsideCancels(): void
    {
        $br = $this->seg->breaker('api');
        $other = $this->seg->breaker('other', ['failure_threshold' => 1]);
        $other->trip(10);
        try {
            $br->call(fn() => $other->call(fn() => 1));
        } catch (CircuitOpen $e) {
        }
        try {
            $br->call(fn() => strlen());
        } catch (\ArgumentCountError $e) {
        }
        $c = $br->info()['counters'];
        $this->assertSame(0, $c['failures']);
        $this->assertSame(2, $c['cancelled']);
    }

    public function testReportHttp429WithRetryAfterCoolsEveryCaller(): void
    {
        $br = $this->seg->breaker('api');
        $p = $br->acquire();
        $this->assertTrue($p->reportHttp(429, ['retry-after' => ['3']]));
        $again = $this->seg->breaker('api');
        $this->expectException(Cooling::class);
        $again->acquire();
    }

    public function testPermitReleasedOnceAndCounted(): void
    {
        $br = $this->seg->breaker('api');
        $p = $br->acquire();
        $this->assertNull($p->counted());
        $this->assertTrue($p->success());
        $this->assertFalse($p->success());
        $this->assertTrue($p->isReleased());
        $this->assertTrue($p->counted());
        $this->assertSame('api', $p->breaker());
    }

    public function testADroppedPermitIsCancelled(): void
    {
        $br = $this->seg->breaker('api', ['max_concurrent' => 1]);
        $p = $br->acquire();
        unset($p);
        $info = $br->info();
        $this->assertSame(0, $info['in_flight']);
        $this->assertSame(1, $info['counters']['cancelled']);
        $br->acquire()->success();
    }

    public function testOperatorActions(): void
    {
        $br = $this->seg->breaker('api');
        $this->assertTrue($br->trip('30s'));
        $this->assertFalse($br->trip(30));
        $this->assertSame('open', $br->state());
        $br->reset();
        $this->assertSame('closed', $br->state());
        $this->assertTrue($br->forceOpen());
        $this->assertSame('forced_open', $br->info()['mode']);
        $this->assertTrue($br->normal());
        $this->assertTrue($br->disable());
        $this->assertTrue($br->metricsOnly());
        $br->configure(['open' => '5s', 'max_open' => '1m']);
        $this->assertSame(5000, $br->info()['config']['open_ms']);
    }

    public function testInfoHasTheFieldsOfBctlInspectJson(): void
    {
        $info = $this->seg->breaker('api', ['hold_histogram' => true])->info();
        foreach (['name', 'kind', 'state', 'mode', 'generation', 'consecutive_failures',
                  'failure_streak', 'implicit_pace_per_s', 'cooling_level', 'open_remaining_ms', 'cool_until_remaining_ms',
                  'half_open_successes', 'probes_in_flight', 'in_flight', 'queued', 'record_bytes',
                  'leases', 'window', 'config', 'concurrency_limit', 'latency_baseline_us',
                  'latency_recent_us', 'counters', 'signals', 'hold_time'] as $k) {
            $this->assertArrayHasKey($k, $info, $k);
        }
        $this->assertSame(0, $info['failure_streak']);
        $this->assertNull($info['implicit_pace_per_s']);
        $this->assertTrue($info['config']['hold_histogram']);
    }

    public function testEveryKeyOfTheDefaultsTable(): void
    {
        $br = $this->seg->breaker('all', [
            'failure_threshold' => 7, 'open' => '250ms', 'max_open' => 90,
            'half_open_probes' => 2, 'success_threshold' => 2, 'probe_timeout' => 1.5,
            'max_wait' => '2m', 'max_concurrent' => 10, 'failure_rate' => 50,
            'window' => '20s', 'min_calls' => 5, 'slow_call' => '800ms', 'slow_rate' => 40,
            'min_distinct_processes' => 2, 'reserve_pct' => 20, 'hold_histogram' => true,
            'fleet' => false, 'fleet_probe' => false, 'implicit_pace' => false,
        ]);
        $c = $br->info()['config'];
        $this->assertSame(7, $c['failure_threshold']);
        $this->assertSame(250, $c['open_ms']);
        $this->assertSame(90000, $c['max_open_ms']);
        $this->assertSame(1500, $c['probe_timeout_ms']);
        $this->assertSame(120000, $c['max_wait_ms']);
        $this->assertSame(50, $c['failure_rate_pct']);
        $this->assertSame(800, $c['slow_call_ms']);
        $this->assertSame(20, $c['reserve_pct']);
        $this->assertFalse($c['implicit_pace']);
        $this->assertTrue($this->seg->breaker('dflt')->info()['config']['implicit_pace']);
    }

    /** max_concurrent = auto as the C fields (docs/design/limits.md
     * "Adaptive concurrency"): concurrency_auto, min_concurrent and
     * max_concurrent its bound; the learned limit starts at 4. */
    public function testALearnedBulkheadLimitByItsCFields(): void
    {
        $br = $this->seg->breaker('auto', ['concurrency_auto' => true, 'min_concurrent' => 2,
                                           'max_concurrent' => 8]);
        $info = $br->info();
        $this->assertTrue($info['config']['concurrency_auto']);
        $this->assertSame(2, $info['config']['min_concurrent']);
        $this->assertSame(8, $info['config']['max_concurrent']);
        $this->assertSame(4.0, $info['concurrency_limit']);
        $this->assertSame(4, $info['signals']['remaining_concurrent']);
        $this->assertSame(0, $info['queued']);
        $br->configure(['concurrency_auto' => false, 'max_concurrent' => 6]);
        $info = $br->info();
        $this->assertFalse($info['config']['concurrency_auto']);
        $this->assertSame(6.0, $info['concurrency_limit']);
        $this->assertNull($info['latency_recent_us']);
        $this->assertNull($this->seg->breaker('nobulkhead')->info()['queued']);
    }

    public function testEventsAndSegmentInfo(): void
    {
        $br = $this->seg->breaker('api', ['failure_threshold' => 1]);
        $br->acquire()->failure();
        $ev = $this->seg->events();
        $this->assertSame('api', $ev['events'][0]['name']);
        $this->assertSame('open', $ev['events'][0]['to']);
        $this->assertSame([], $this->seg->events($ev['next'])['events']);
        $this->assertSame($this->shm, $this->seg->info()['shm']);
    }

    public function testClassifyHttpIsTheLibrarysTable(): void
    {
        $this->assertSame(['outcome' => 'failure', 'reason' => 'rate_limited', 'retry_after' => 2.0],
            Breakerd\classifyHttp(429, ['Retry-After' => '2']));
        $this->assertSame('healthy_error', Breakerd\classifyHttp(404)['outcome']);
        $this->assertSame('rejected_request', Breakerd\classifyHttp(401)['outcome']);
        $this->assertSame(0.25, Breakerd\parseDuration('250ms'));
    }

    public function testLimits(): void
    {
        $k = $this->seg->bucket('k', 1.0, 2);
        $k->take(2);
        $this->assertGreaterThan(0.0, $k->tryTake());
        $g = $this->seg->budget('g', 0.0, 0.5);
        $this->assertFalse($g->tryRetry());
        $g->deposit();
        $g->deposit();
        $g->retry();
        $this->assertSame(1, $g->info()['counters']['retries']);
        $pc = $this->seg->pace('pc', 100.0);
        $this->assertTrue($pc->take()->report(429));
    }

    public function testAdmitUsesTheReserveAndAPacedRateLimitIsThrottled(): void
    {
        $br = $this->seg->breaker('adm', ['max_concurrent' => 2, 'reserve_pct' => 50]);
        $a = $this->seg->admit($br);
        try {
            $this->seg->admit($br);
            $this->fail('normal priority took the reserve');
        } catch (Breakerd\BulkheadFull $e) {
            $this->assertSame('adm', $e->getBreaker());
        }
        $high = $this->seg->admit($br, priority: 'high');
        $this->assertInstanceOf(Breakerd\Admission::class, $high);
        $this->assertTrue($high->success());
        $this->assertTrue($a->success());

        $pace = $this->seg->pace('adm-pace', 100.0);
        $x = $this->seg->admit($br, $pace);
        $x->reportHttp(429);
        $c = $br->info()['counters'];
        $this->assertSame(1, $c['throttled']);
        $this->assertSame(0, $c['failures']);
        $this->assertSame(1, $pace->info()['pace']['counters']['cuts']);
    }
}

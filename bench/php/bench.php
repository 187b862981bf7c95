<?php
// bench/php/bench.php [--redis-port PORT] [--runs N] [--quick]
//
// A call on a closed breaker from PHP (the breakerd extension), side by
// side in one run with the designs PHP users pick today, both after
// ackintosh/ganesha's Rate strategy (a tumbling time window of failure,
// success and rejection counters, the caller reporting success()):
//   (a) APCu-backed (ganesha's ApcuStore, the usual on-host store): per
//       healthy call isAvailable() reads the failure counters of the
//       current and the previous window (2 apcu_fetch), success() reads
//       the status (apcu_fetch) and increments the window's success
//       counter (apcu_inc): 4 APCu operations on keys built per call;
//   (b) Redis-backed (ganesha's RedisStore, a sliding window of sorted
//       sets): isAvailable() trims and counts the failures
//       (ZREMRANGEBYSCORE, ZCARD), success() reads the status (GET), adds
//       the success (ZADD) and trims (ZREMRANGEBYSCORE): 5 round trips
//       over loopback TCP to a private redis-server.
// Then 8 forked processes hammer ONE breakerd breaker and the segment's
// counters must add up exactly to the calls made (no lost update).
//
// Prints median ns per call of --runs runs [min - max], calls/s, the cost
// relative to breakerd, and GOAL lines; exit 0 if every goal is met, 3 if
// one is missed, 1 on error. Run through bench/php/run.sh.
declare(strict_types=1);

use Breakerd\Segment;

$opts = getopt('', ['redis-port:', 'runs:', 'quick']);
$quick = isset($opts['quick']);
$runs = (int)($opts['runs'] ?? 5);
$redisPort = isset($opts['redis-port']) ? (int)$opts['redis-port'] : null;
$CALLS = $quick ? 20000 : 500000;
$REDIS_CALLS = $quick ? 500 : 5000;
$PROC_CALLS = $quick ? 10000 : 200000;
const NPROC = 8;

/** ns per call of $n calls of $fn (a warm-up of $n / 10 first). */
function per_call(int $n, callable $fn): float
{
    for ($i = 0; $i < intdiv($n, 10); $i++) {
        $fn();
    }
    $t = hrtime(true);
    for ($i = 0; $i < $n; $i++) {
        $fn();
    }
    return (hrtime(true) - $t) / $n;
}

function median(array $xs): float
{
    sort($xs);
    return $xs[intdiv(count($xs), 2)];
}

// ---- (a) ganesha's Rate strategy over APCu --------------------------------------

final class ApcuGaneshaDesign
{
    public function __construct(private int $timeWindow = 30, private int $failureRateThreshold = 50,
                                private int $minimumRequests = 10) {}

    private function key(string $service, string $what, int $window): string
    {
        return "ganesha_{$service}_{$what}_{$window}";
    }

    public function isAvailable(string $service): bool
    {
        $now = time();
        $cur = intdiv($now, $this->timeWindow);
        foreach ([$cur, $cur - 1] as $w) {
            $failure = (int)apcu_fetch($this->key($service, 'failure', $w));
            if ($failure !== 0 && $failure / $this->minimumRequests * 100 >= $this->failureRateThreshold) {
                return $this->rareRatePath($service, $w, $failure);
            }
        }
        return true;
    }

    private function rareRatePath(string $service, int $w, int $failure): bool
    {
        $success = (int)apcu_fetch($this->key($service, 'success', $w));
        $rejection = (int)apcu_fetch($this->key($service, 'rejection', $w));
        return $failure / ($failure + $success + $rejection) * 100 < $this->failureRateThreshold;
    }

    public function success(string $service): void
    {
        $status = apcu_fetch("ganesha_{$service}_status");
        if ($status === 'tripped') {
            apcu_store("ganesha_{$service}_status", 'calmed_down');
        }
        $key = $this->key($service, 'success', intdiv(time(), $this->timeWindow));
        if (apcu_inc($key, 1, $ok) === false || !$ok) {
            apcu_add($key, 1, $this->timeWindow * 2);
        }
    }
}

// ---- (b) ganesha's Rate strategy over Redis -------------------------------------

final class RedisGaneshaDesign
{
    public function __construct(private \Redis $r, private int $timeWindow = 30,
                                private int $failureRateThreshold = 50, private int $minimumRequests = 10) {}

    public function isAvailable(string $service): bool
    {
        $now = microtime(true);
        $this->r->zRemRangeByScore("ganesha:$service:failure", '-inf', (string)($now - $this->timeWindow));
        $failure = $this->r->zCard("ganesha:$service:failure");
        return $failure === 0 || $failure / $this->minimumRequests * 100 < $this->failureRateThreshold;
    }

    public function success(string $service): void
    {
        $now = microtime(true);
        if ($this->r->get("ganesha:$service:status") === 'tripped') {
            $this->r->set("ganesha:$service:status", 'calmed_down');
        }
        $this->r->zAdd("ganesha:$service:success", $now, (string)$now . mt_rand());
        $this->r->zRemRangeByScore("ganesha:$service:success", '-inf', (string)($now - $this->timeWindow));
    }
}

$shm = '/brkphp-bench-' . getmypid();
Segment::unlink($shm);
$seg = Segment::attach($shm);
$br = $seg->breaker('bench/api');
$work = static fn() => 1;
$rows = [];

$measure = function (string $label, int $n, callable $fn) use ($runs, &$rows) {
    $xs = [];
    for ($i = 0; $i < $runs; $i++) {
        $xs[] = per_call($n, $fn);
    }
    $rows[$label] = [median($xs), min($xs), max($xs)];
};

$measure('breakerd: $br->call($fn) (host-wide)', $CALLS, static fn() => $br->call($work));
$measure('breakerd: acquire()->success() (host-wide)', $CALLS, static function () use ($br, $work) {
    $p = $br->acquire();
    $work();
    $p->success();
});
$apcu = null;
if (function_exists('apcu_enabled') && apcu_enabled()) {
    $apcu = new ApcuGaneshaDesign();
    $measure('ganesha design on APCu (per FPM pool)', $CALLS, static function () use ($apcu, $work) {
        if ($apcu->isAvailable('api')) {
            $work();
            $apcu->success('api');
        }
    });
} else {
    echo "# skip: APCu not enabled (apt-get install php8.2-apcu; -d apc.enable_cli=1)\n";
}
if ($redisPort !== null && class_exists('Redis')) {
    $r = new \Redis();
    $r->connect('127.0.0.1', $redisPort);
    $redis = new RedisGaneshaDesign($r);
    $measure('ganesha design on Redis (shared, 5 RTT)', $REDIS_CALLS, static function () use ($redis, $work) {
        if ($redis->isAvailable('api')) {
            $work();
            $redis->success('api');
        }
    });
} else {
    echo "# skip: no redis-server port or php-redis: the Redis row is skipped\n";
}

$base = $rows['breakerd: $br->call($fn) (host-wide)'][0];
printf("PHP %s, median of %d runs (ns per call on a closed breaker, [min - max])\n", PHP_VERSION, $runs);
printf("%-46s %9s %19s %12s %9s\n", 'design', 'ns/call', '[min - max]', 'calls/s', 'vs br');
foreach ($rows as $label => [$med, $lo, $hi]) {
    printf("%-46s %9.0f %8.0f - %8.0f %12.0f %8.2fx\n", $label, $med, $lo, $hi, 1e9 / $med, $med / $base);
}

// ---- 8 processes, one breaker, no lost update ------------------------------------
$before = $br->info()['counters'];
$pids = [];
for ($i = 0; $i < NPROC; $i++) {
    $pid = pcntl_fork();
    if ($pid === 0) {
        $b = Segment::attach($shm)->breaker('bench/api');
        for ($j = 0; $j < $PROC_CALLS; $j++) {
            $b->call($work);
        }
        posix_kill(getmypid(), SIGKILL); // skip the shutdown of the parent's objects
    }
    $pids[] = $pid;
}
foreach ($pids as $pid) {
    pcntl_waitpid($pid, $st);
}
$after = $br->info()['counters'];
$got = $after['successes'] - $before['successes'];
$allowed = $after['allowed'] - $before['allowed'];
$want = NPROC * $PROC_CALLS;
Segment::unlink($shm);

$missed = 0;
$goal = function (bool $ok, string $what) use (&$missed) {
    echo $ok ? 'GOAL met: ' : 'GOAL MISSED: ', $what, "\n";
    $missed += $ok ? 0 : 1;
};
$goal($got === $want && $allowed === $want,
    sprintf('%d processes, no lost update (%d calls, %d successes, %d admitted)', NPROC, $want, $got, $allowed));
$goal($base <= 1000, sprintf('a closed-breaker call costs <= 1 us (%.0f ns)', $base));
if ($apcu) {
    $a = $rows['ganesha design on APCu (per FPM pool)'][0];
    $goal($base <= $a, sprintf('not slower than the APCu design (%.0f ns vs %.0f ns)', $base, $a));
}
if (isset($redis)) {
    $x = $rows['ganesha design on Redis (shared, 5 RTT)'][0];
    $goal($x / $base >= 100, sprintf('>= 100x faster than Redis (%.0fx)', $x / $base));
}
exit($missed ? 3 : 0);

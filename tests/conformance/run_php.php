<?php
// The conformance runner for the PHP extension (bindings/php): every
// scenario of the JSON files named on the command line, on
// Breakerd\Testing\FakeClock, one private segment per scenario. Same
// format and output as run_c.c (README.md). Run by tests/php/run.sh,
// which loads the build tree's extension.
declare(strict_types=1);

use Breakerd\Refused;
use Breakerd\Segment;
use Breakerd\Testing\FakeClock;

const LANG = 'php';

final class Mismatch extends Exception {}

function at_path(array $h, string $path)
{
    foreach (explode('.', $path) as $k) {
        if (!is_array($h) || !array_key_exists($k, $h)) {
            return null;
        }
        $h = $h[$k];
    }
    return $h;
}

function matches($want, $got, float $slack = 0.0): bool
{
    $num = fn($x) => is_int($x) || is_float($x);
    if (is_array($want)) {
        return $num($got) && $got >= $want[0] - $slack && $got <= $want[1] + $slack;
    }
    if ($num($want)) {
        return $num($got) && abs($want - $got) <= $slack + 1e-9;
    }
    return $want === $got;
}

final class Run
{
    private array $recs = [];
    private array $held = [];

    public function __construct(private Segment $seg, private FakeClock $clock) {}

    public function record(string $name, array $spec): void
    {
        $this->recs[$name] = match ($spec['kind']) {
            'breaker' => $this->seg->breaker($name, $spec['settings'] ?? []),
            'bucket' => $this->seg->bucket($name, (float)$spec['rate'], $spec['burst']),
            'pace' => $this->seg->pace($name, (float)$spec['ceiling'],
                isset($spec['floor']) ? (float)$spec['floor'] : null, $spec['burst'] ?? null),
            'budget' => $this->seg->budget($name, (float)$spec['floor'], (float)$spec['ratio']),
            default => throw new Mismatch("record $name: unknown kind {$spec['kind']}"),
        };
    }

    /** Run a gate call; check admitted/refused as the step says. */
    private function answer(array $st, string $what, callable $fn)
    {
        $want = $st['refused'] ?? null;
        try {
            $got = $fn();
        } catch (Refused $e) {
            $cls = substr(strrchr(get_class($e), '\\'), 1);
            if ($cls !== $want) {
                throw new Mismatch("$what: $cls, want " . ($want ?? 'admitted'));
            }
            if (isset($st['cause']) && $e->getCause() !== $st['cause']) {
                throw new Mismatch("$what: cause {$e->getCause()}, want {$st['cause']}");
            }
            if (isset($st['by']) && $e->getBreaker() !== $st['by']) {
                throw new Mismatch("$what: by {$e->getBreaker()}, want {$st['by']}");
            }
            if (isset($st['wait_ms']) && !matches($st['wait_ms'], $e->getWait() * 1000.0, 1.0)) {
                throw new Mismatch(sprintf('%s: wait %.3f ms outside %s', $what,
                    $e->getWait() * 1000.0, json_encode($st['wait_ms'])));
            }
            return null;
        }
        if ($want !== null) {
            throw new Mismatch("$what: admitted, want $want");
        }
        return $got;
    }

    private function release(array $st, Breakerd\Permit|Breakerd\Admission $p): bool
    {
        if (array_key_exists('http', $st)) {
            $headers = isset($st['retry_after']) ? ['Retry-After' => $st['retry_after']] : [];
            return $p->reportHttp($st['http'], $headers);
        }
        $ra = isset($st['retry_after_ms']) ? $st['retry_after_ms'] / 1000.0 : null;
        return match ($st['outcome'] ?? null) {
            'success' => $p->success($ra),
            'failure' => $p->failure($st['reason'] ?? 'server_error', $ra),
            'healthy_error' => $p->healthyError($ra),
            'rejected_request' => $p->rejected($ra),
            'cancelled' => $p->cancel(),
            default => throw new Mismatch('unknown outcome ' . json_encode($st['outcome'] ?? null)),
        };
    }

    private function rec(string $name)
    {
        if (!isset($this->recs[$name])) {
            throw new Mismatch("no record $name");
        }
        return $this->recs[$name];
    }

    public function step(array $st): void
    {
        if (isset($st['advance'])) {
            $this->clock->advance($st['advance']);
        } elseif (isset($st['expect'])) {
            $info = $this->rec($st['expect'])->info();
            foreach ($st['info'] as $key => $want) {
                $got = at_path($info, $key);
                if ($got === null || !matches($want, $got)) {
                    throw new Mismatch("{$st['expect']}: $key is " . json_encode($got) .
                        ', want ' . json_encode($want));
                }
            }
        } elseif (isset($st['call'])) {
            $br = $this->rec($st['call']);
            for ($i = 0; $i < ($st['times'] ?? 1); $i++) {
                $p = $this->answer($st, "acquire {$st['call']}", fn() => $br->acquire());
                if ($p) {
                    $this->release($st, $p);
                }
            }
        } elseif (isset($st['acquire'])) {
            $br = $this->rec($st['acquire']);
            $p = $this->answer($st, "acquire {$st['acquire']}", fn() => $br->acquire());
            if ($p) {
                if (isset($st['as'])) {
                    $this->held[$st['as']] = $p;
                } else {
                    $p->cancel();
                }
            }
        } elseif (isset($st['admit'])) {
            $br = $this->rec($st['admit']);
            $a = $this->answer($st, "admit {$st['admit']}",
                fn() => $this->seg->admit($br, priority: $st['priority'] ?? 'normal'));
            if ($a) {
                if (isset($st['as'])) {
                    $this->held[$st['as']] = $a;
                } else {
                    $a->cancel();
                }
            }
        } elseif (isset($st['release'])) {
            $counted = $this->release($st, $this->held[$st['release']]);
            if (array_key_exists('counted', $st) && $counted !== $st['counted']) {
                throw new Mismatch("release {$st['release']}: counted " . json_encode($counted) .
                    ', want ' . json_encode($st['counted']));
            }
        } elseif (isset($st['op'])) {
            $br = $this->rec($st['breaker']);
            match ($st['op']) {
                'trip' => $br->trip($st['for'] ?? 60),
                'reset' => $br->reset(),
                'force_open' => $br->forceOpen(),
                'disable' => $br->disable(),
                'metrics_only' => $br->metricsOnly(),
                'normal' => $br->normal(),
                default => throw new Mismatch("unknown op {$st['op']}"),
            };
        } elseif (isset($st['take'])) {
            $k = $this->rec($st['take']);
            $this->answer($st, 'take', fn() => $k->take($st['n'] ?? 1) ?? true);
        } elseif (isset($st['pace_take'])) {
            $k = $this->rec($st['pace_take']);
            $t = $this->answer($st, 'pace_take', fn() => $k->take());
            if ($t && isset($st['as'])) {
                $this->held[$st['as']] = $t;
            }
        } elseif (isset($st['pace_report'])) {
            $headers = isset($st['retry_after']) ? ['Retry-After' => $st['retry_after']] : [];
            $cut = $this->held[$st['pace_report']]->report($st['http'], $headers);
            if (array_key_exists('cut', $st) && $cut !== $st['cut']) {
                throw new Mismatch('pace_report: cut ' . json_encode($cut) . ', want ' . json_encode($st['cut']));
            }
        } elseif (isset($st['deposit'])) {
            $g = $this->rec($st['deposit']);
            for ($i = 0; $i < ($st['times'] ?? 1); $i++) {
                $g->deposit();
            }
        } elseif (isset($st['retry'])) {
            $g = $this->rec($st['retry']);
            for ($i = 0; $i < ($st['times'] ?? 1); $i++) {
                $this->answer($st, 'retry', fn() => $g->retry() ?? true);
            }
        } else {
            throw new Mismatch('unknown step');
        }
    }
}

function run_scenario(array $sc, int $n): void
{
    $shm = sprintf('/brkconf-php-%d-%d', getmypid(), $n);
    $clock = new FakeClock();
    $seg = Segment::attach($shm, 64, $clock);
    try {
        $r = new Run($seg, $clock);
        foreach ($sc['records'] ?? [] as $name => $spec) {
            $r->record((string)$name, $spec);
        }
        foreach ($sc['steps'] as $i => $st) {
            try {
                $r->step($st);
            } catch (Mismatch | Breakerd\Error | ValueError | TypeError $e) {
                throw new Mismatch(sprintf('step %d %s: %s', $i + 1,
                    json_encode($st, JSON_UNESCAPED_SLASHES), $e->getMessage()));
            }
        }
    } finally {
        $seg->close();
        Segment::unlink($shm);
    }
}

$passed = $failed = $skipped = $n = 0;
foreach (array_slice($argv, 1) as $path) {
    $doc = json_decode(file_get_contents($path), true, 512, JSON_THROW_ON_ERROR);
    foreach ($doc['scenarios'] as $sc) {
        $n++;
        if (isset($sc['unsupported'][LANG])) {
            echo "skip {$sc['name']}: {$sc['unsupported'][LANG]}\n";
            $skipped++;
            continue;
        }
        try {
            run_scenario($sc, $n);
            echo "ok {$sc['name']}\n";
            $passed++;
        } catch (Mismatch $e) {
            echo "not ok {$sc['name']}: {$e->getMessage()}\n";
            $failed++;
        }
    }
}
echo "conformance (" . LANG . "): $passed passed, $failed failed, $skipped skipped\n";
exit($failed === 0 ? 0 : 1);

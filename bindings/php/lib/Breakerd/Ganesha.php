<?php
// Breakerd\Ganesha - the shape of ackintosh/ganesha's entry point
// (isAvailable / success / failure per service name) over host-wide
// breakers, for code written against ganesha. One breaker per service.
//
// isAvailable() asks for a permit (a probe, when half-open: one for the
// whole host, not one per worker) and keeps it for the service;
// success()/failure() report the oldest one kept (or, without one, take
// and report a permit at once). A permit never reported is cancelled when
// this object goes or at the end of the request. What maps and what does
// not: docs/guide/php.md "Coming from ganesha".
declare(strict_types=1);

namespace Breakerd;

final class Ganesha
{
    /** ganesha's builder options -> the breaker settings */
    private const OPTIONS = [
        'failureCountThreshold' => 'failure_threshold',
        'failureRateThreshold' => 'failure_rate',
        'timeWindow' => 'window',
        'minimumRequests' => 'min_calls',
        'intervalToHalfOpen' => 'open',
    ];

    /** @var array<string, Breaker> */
    private array $breakers = [];
    /** @var array<string, list<Permit>> */
    private array $held = [];
    private array $settings;

    /**
     * @param array $options ganesha's names (failureCountThreshold,
     *        failureRateThreshold, timeWindow, minimumRequests,
     *        intervalToHalfOpen: seconds as in ganesha) or breakerd's
     *        settings keys; anything else is a ValueError.
     */
    public function __construct(private Segment $segment, array $options = [])
    {
        $settings = [];
        foreach ($options as $k => $v) {
            $settings[self::OPTIONS[$k] ?? $k] = $v;
        }
        $this->settings = $settings; // checked by Segment::breaker() at first use
    }

    /** The breaker of a service name (bytes outside A-Z a-z 0-9 . _ : / - become "_"). */
    public function breaker(string $service): Breaker
    {
        return $this->breakers[$service] ??= $this->segment->breaker(self::name($service), $this->settings);
    }

    public static function name(string $service): string
    {
        $n = substr(preg_replace('~[^A-Za-z0-9._:/-]~', '_', $service), 0, 63);
        return trim(preg_replace('~/+~', '/', $n), '/') ?: 'unnamed';
    }

    public function isAvailable(string $service): bool
    {
        try {
            $this->held[$service][] = $this->breaker($service)->acquire();
            return true;
        } catch (Refused $e) {
            return false;
        }
    }

    public function success(string $service): void
    {
        $this->report($service, static fn(Permit $p) => $p->success());
    }

    public function failure(string $service): void
    {
        $this->report($service, static fn(Permit $p) => $p->failure('other'));
    }

    /** Back to closed for every service this object has used. */
    public function reset(): void
    {
        foreach ($this->breakers as $br) {
            $br->reset();
        }
    }

    private function report(string $service, callable $how): void
    {
        $p = $this->held[$service] ? array_shift($this->held[$service]) : null;
        if ($p === null) {
            try {
                $p = $this->breaker($service)->acquire();
            } catch (Refused $e) {
                return; // nothing admitted, nothing to count (ganesha would count it)
            }
        }
        $how($p);
    }
}

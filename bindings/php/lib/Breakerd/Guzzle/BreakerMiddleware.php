<?php
// Breakerd\Guzzle\BreakerMiddleware - a Guzzle 7 middleware that puts
// every request under a host-wide breaker: one per host (or per the name
// a naming function gives). A refusal rejects the request before the
// handler runs, so no connection is opened; an answer is classified by
// the library (brk_http_classify(), through Permit::reportHttp(): status
// and Retry-After); a transport error is a failure ("timeout" when the
// handler says so, else "connect"). No breaker rule lives here.
declare(strict_types=1);

namespace Breakerd\Guzzle;

use Breakerd\Breaker;
use Breakerd\Permit;
use Breakerd\Refused;
use Breakerd\Segment;
use GuzzleHttp\Exception\ConnectException;
use GuzzleHttp\Exception\RequestException;
use GuzzleHttp\Promise\Create;
use GuzzleHttp\Promise\PromiseInterface;
use Psr\Http\Message\RequestInterface;
use Psr\Http\Message\ResponseInterface;

final class BreakerMiddleware
{
    /** @var array<string, Breaker> */
    private array $breakers = [];
    /** @var callable(RequestInterface): string */
    private $naming;

    /**
     * @param array $settings keys of the defaults table, used when a
     *        breaker is created (Segment::breaker())
     * @param ?callable(RequestInterface): string $naming the breaker name
     *        of a request; default: its host (and port, if given)
     */
    public function __construct(private Segment $segment, private array $settings = [],
                                ?callable $naming = null)
    {
        $this->naming = $naming ?? [self::class, 'hostName'];
    }

    /** For HandlerStack::push(): BreakerMiddleware::create($seg, [...]). */
    public static function create(Segment $segment, array $settings = [],
                                  ?callable $naming = null): self
    {
        return new self($segment, $settings, $naming);
    }

    /** The default name: "host" or "host:port", other bytes as "_". */
    public static function hostName(RequestInterface $request): string
    {
        $uri = $request->getUri();
        $name = $uri->getHost() . ($uri->getPort() !== null ? ':' . $uri->getPort() : '');
        $name = preg_replace('~[^A-Za-z0-9._:/-]~', '_', $name);
        return $name === '' ? 'unnamed' : substr($name, 0, 63);
    }

    public function breakerFor(RequestInterface $request): Breaker
    {
        $name = ($this->naming)($request);
        return $this->breakers[$name] ??= $this->segment->breaker($name, $this->settings);
    }

    public function __invoke(callable $handler): callable
    {
        return function (RequestInterface $request, array $options) use ($handler): PromiseInterface {
            try {
                $permit = $this->breakerFor($request)->acquire();
            } catch (Refused $refused) {
                return Create::rejectionFor($refused);   // before any connection
            }
            try {
                $promise = $handler($request, $options);
            } catch (\Throwable $e) {
                self::reportError($permit, $e);
                throw $e;
            }
            return $promise->then(
                static function (ResponseInterface $response) use ($permit) {
                    $permit->reportHttp($response->getStatusCode(), $response->getHeaders());
                    return $response;
                },
                static function ($reason) use ($permit) {
                    self::reportError($permit, $reason);
                    return Create::rejectionFor($reason);
                }
            );
        };
    }

    /** A rejected request: an answer (http_errors) is classified by its
     * status; no answer is a failure of the upstream; a refusal of
     * another breaker inside, or a local cancel, is no verdict. */
    private static function reportError(Permit $permit, $reason): void
    {
        if ($reason instanceof RequestException && $reason->getResponse() !== null) {
            $r = $reason->getResponse();
            $permit->reportHttp($r->getStatusCode(), $r->getHeaders());
        } elseif ($reason instanceof ConnectException || $reason instanceof RequestException) {
            $ctx = $reason->getHandlerContext();
            $timeout = ($ctx['errno'] ?? 0) === 28 /* CURLE_OPERATION_TIMEDOUT */
                || stripos($reason->getMessage(), 'timed out') !== false;
            $permit->failure($timeout ? 'timeout' : 'connect');
        } elseif ($reason instanceof Refused || !($reason instanceof \Exception)) {
            $permit->cancel();
        } else {
            $permit->failure('other');
        }
    }
}

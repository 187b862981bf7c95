<?php
declare(strict_types=1);

use Breakerd\CircuitOpen;
use Breakerd\Cooling;
use Breakerd\Guzzle\BreakerMiddleware;
use Breakerd\Segment;
use Breakerd\Testing\FakeClock;
use GuzzleHttp\Client;
use GuzzleHttp\Exception\ConnectException;
use GuzzleHttp\Exception\ServerException;
use GuzzleHttp\Handler\MockHandler;
use GuzzleHttp\HandlerStack;
use GuzzleHttp\Psr7\Request;
use GuzzleHttp\Psr7\Response;
use PHPUnit\Framework\TestCase;

require_once '/usr/share/php/GuzzleHttp/autoload.php';

final class GuzzleTest extends TestCase
{
    private string $shm;
    private Segment $seg;

    protected function setUp(): void
    {
        $this->shm = brk_test_shm('guzzle');
        $this->seg = Segment::attach($this->shm, 64, new FakeClock());
    }

    protected function tearDown(): void
    {
        Segment::unlink($this->shm);
    }

    private function client(callable $handler, array $settings = [], ?callable $naming = null): Client
    {
        $stack = HandlerStack::create($handler);
        $stack->push(BreakerMiddleware::create($this->seg, $settings, $naming), 'breakerd');
        return new Client(['handler' => $stack]);
    }

    public function testStatusAndRetryAfterAreClassifiedByTheLibrary(): void
    {
        $mock = new MockHandler([
            new Response(200), new Response(404), new Response(401),
            new Response(503), new Response(429, ['Retry-After' => '5']),
        ]);
        // implicit_pace off: the 429 stays a rate_limited failure whose
        // Retry-After cools (the default: testA429MakesTheImplicitPace)
        $client = $this->client($mock, ['failure_threshold' => 10, 'implicit_pace' => false]);
        $client->get('http://api.example/a');
        foreach ([404, 401, 503, 429] as $st) {
            try {
                $client->get('http://api.example/a');
            } catch (\GuzzleHttp\Exception\BadResponseException $e) {
                $this->assertSame($st, $e->getResponse()->getStatusCode());
            }
        }
        $info = $this->seg->breaker('api.example')->info();
        $this->assertSame(1, $info['counters']['successes']);
        $this->assertSame(1, $info['counters']['healthy_errors']);
        $this->assertSame(1, $info['counters']['ignored']);
        $this->assertSame(1, $info['counters']['failures_by_reason']['overloaded']);
        $this->assertSame(1, $info['counters']['failures_by_reason']['rate_limited']);
        $this->assertGreaterThan(4000, $info['cool_until_remaining_ms']);
        $this->expectException(Cooling::class);
        $client->get('http://api.example/b');
    }

    public function testA429MakesTheImplicitPace(): void
    {
        $mock = new MockHandler([new Response(429, ['Retry-After' => '5'])]);
        $client = $this->client($mock, ['failure_threshold' => 1]);
        try {
            $client->get('http://api.example/a');
            $this->fail('a 429 is a BadResponseException');
        } catch (\GuzzleHttp\Exception\BadResponseException $e) {
            $this->assertSame(429, $e->getResponse()->getStatusCode());
        }
        $info = $this->seg->breaker('api.example')->info();
        $this->assertSame('closed', $info['state']);
        $this->assertSame(0, $info['counters']['failures']);
        $this->assertSame(0, $info['counters']['failures_by_reason']['rate_limited']);
        $this->assertSame(1, $info['counters']['throttled']);
        $this->assertSame(0, $info['cool_until_remaining_ms']);
        $this->assertGreaterThan(0.0, $info['implicit_pace_per_s']);
        try {
            $client->get('http://api.example/b');
            $this->fail('the next call waits for the implicit pace');
        } catch (Cooling $e) {
            $this->assertSame('paced', $e->getCause());
        }
    }

        public function testOneBreakerPerHostOrFromANamingFunction(): void
    {
        $client = $this->client(new MockHandler([new Response(500), new Response(200)]),
            ['failure_threshold' => 1]);
        try {
            $client->get('http://a.example:8080/');
        } catch (ServerException $e) {
        }
        $this->assertSame('open', $this->seg->breaker('a.example:8080')->state());
        $client->get('http://b.example/');
        $this->assertSame('closed', $this->seg->breaker('b.example')->state());

        $named = $this->client(new MockHandler([new Response(200)]), [],
            fn(Request $r) => 'svc/' . explode('/', $r->getUri()->getPath())[1]);
        $named->get('http://c.example/users/1');
        $this->assertSame(1, $this->seg->breaker('svc/users')->info()['counters']['successes']);
    }

    public function testATransportErrorIsAConnectFailure(): void
    {
        $req = new Request('GET', 'http://down.example/');
        $client = $this->client(new MockHandler([new ConnectException('Connection refused', $req)]));
        try {
            $client->send($req);
        } catch (ConnectException $e) {
        }
        $c = $this->seg->breaker('down.example')->info()['counters'];
        $this->assertSame(1, $c['failures_by_reason']['connect']);
    }

    public function testARefusalThrowsBeforeAConnectionOpens(): void
    {
        $srv = stream_socket_server('tcp://127.0.0.1:0', $errno, $errstr);
        $this->assertNotFalse($srv, $errstr);
        $addr = stream_socket_get_name($srv, false);
        $client = $this->client(new \GuzzleHttp\Handler\StreamHandler(), ['failure_threshold' => 1]);
        $this->seg->breaker($addr)->trip(60);
        for ($i = 0; $i < 5; $i++) {
            try {
                $client->get("http://$addr/", ['timeout' => 0.5]);
                $this->fail('not refused');
            } catch (CircuitOpen $e) {
                $this->assertSame($addr, $e->getBreaker());
            }
        }
        $this->assertFalse(@stream_socket_accept($srv, 0.2), 'a connection was opened');
        // the same socket does count a connection when the breaker admits one
        $this->seg->breaker($addr)->reset();
        try {
            $client->get("http://$addr/", ['timeout' => 0.3]);
        } catch (\GuzzleHttp\Exception\TransferException $e) {
        }
        $this->assertNotFalse(@stream_socket_accept($srv, 1.0), 'the socket counts nothing');
        $this->assertSame(1, $this->seg->breaker($addr)->info()['counters']['failures']);
    }
}

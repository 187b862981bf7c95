<?php
declare(strict_types=1);

use Breakerd\Segment;
use PHPUnit\Framework\TestCase;

/** What FPM children need: a permit left unreported at the end of a
 * request is cancelled (RSHUTDOWN), a killed process's lease is
 * reclaimed, a fork()ed child attaches its own handle and never releases
 * its parent's permit. Real clock, real processes. */
final class LifecycleTest extends TestCase
{
    private string $shm;

    protected function setUp(): void
    {
        $this->shm = brk_test_shm('life');
    }

    protected function tearDown(): void
    {
        Segment::unlink($this->shm);
    }

    private function php(string $code): int
    {
        $cmd = [PHP_BINARY, '-n', '-d', 'extension=' . getenv('BRKPHP_EXT'), '-r', $code];
        $proc = proc_open($cmd, [1 => ['pipe', 'w'], 2 => ['pipe', 'w']], $pipes,
            null, ['BREAKERD_SHM' => $this->shm, 'LD_LIBRARY_PATH' => getenv('LD_LIBRARY_PATH')]);
        stream_get_contents($pipes[1]);
        stream_get_contents($pipes[2]);
        return proc_close($proc);
    }

    private function breaker(): Breakerd\Breaker
    {
        return Segment::attach($this->shm)->breaker('api', ['max_concurrent' => 1]);
    }

    /** @dataProvider endings */
    public function testAPermitLeftAtRequestEndIsCancelled(string $ending): void
    {
        $br = $this->breaker();
        $this->php('$GLOBALS["p"] = Breakerd\Segment::attach()->breaker("api")->acquire(); ' . $ending);
        $info = $br->info();
        $this->assertSame(0, $info['in_flight'], "permit still out after: $ending");
        $this->assertSame(1, $info['counters']['cancelled']);
        $this->assertTrue($br->acquire()->success());
    }

    public static function endings(): array
    {
        return [
            'end of script' => [''],
            'exit()' => ['exit(3);'],
            'fatal error' => ['no_such_function();'],
            'uncaught exception' => ['throw new Exception("x");'],
            'a static kept in a closure' => ['$f = function () { static $keep; $keep = $GLOBALS["p"]; }; $f();'],
        ];
    }

    public function testAKilledHoldersLeaseIsReclaimed(): void
    {
        $br = $this->breaker();
        $cmd = [PHP_BINARY, '-n', '-d', 'extension=' . getenv('BRKPHP_EXT'), '-r',
                '$p = Breakerd\Segment::attach()->breaker("api")->acquire(); echo "held\n"; sleep(30);'];
        $proc = proc_open($cmd, [1 => ['pipe', 'w']], $pipes, null,
            ['BREAKERD_SHM' => $this->shm, 'LD_LIBRARY_PATH' => getenv('LD_LIBRARY_PATH')]);
        $this->assertSame("held\n", fgets($pipes[1]));
        proc_terminate($proc, 9);
        proc_close($proc);
        $this->assertSame(1, $br->info()['in_flight']);
        // the next caller finds the bulkhead full, sees the owner dead and reclaims
        $this->assertTrue($br->acquire()->success());
        $this->assertSame(1, $br->info()['counters']['reclaimed']);
    }

    public function testAForkedChildAttachesItsOwnAndLeavesTheParentsPermit(): void
    {
        if (!function_exists('pcntl_fork')) {
            $this->markTestSkipped('pcntl missing');
        }
        $br = $this->breaker();
        $p = $br->acquire();
        $pid = pcntl_fork();
        if ($pid === 0) {
            $ok = $p->success() === false                       // the parent's: not ours
                && Segment::attach($this->shm)->breaker('api')->info()['in_flight'] === 1;
            posix_kill(getmypid(), $ok ? 15 : 9);               // no PHPUnit shutdown in the child
        }
        pcntl_waitpid($pid, $status);
        $this->assertSame(15, pcntl_wtermsig($status), 'the child saw something wrong');
        $this->assertSame(1, $br->info()['in_flight']);
        $this->assertTrue($p->success());
    }

    public function testHandlesAreReusedAcrossAttaches(): void
    {
        $a = Segment::attach($this->shm);
        $b = Segment::attach($this->shm);
        $a->close();
        $this->assertTrue($a->isClosed());
        $this->assertFalse($b->isClosed());
        $this->assertSame('closed', $b->breaker('api')->state());
    }
}

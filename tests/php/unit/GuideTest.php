<?php
declare(strict_types=1);

use Breakerd\Segment;
use PHPUnit\Framework\TestCase;

/** Every ```php block of docs/guide/php.md runs, alone, on a private
 * segment ($BREAKERD_SHM), with the build tree's extension and the PHP
 * layer on the include_path, exits 0 and prints no warning. */
final class GuideTest extends TestCase
{
    public function testEveryPhpExampleRuns(): void
    {
        $src = getenv('BRKPHP_SRCDIR');
        $guide = "$src/docs/guide/php.md";
        preg_match_all('/^```php\n(.*?)^```/ms', file_get_contents($guide), $m);
        $this->assertGreaterThanOrEqual(5, count($m[1]));
        foreach ($m[1] as $i => $code) {
            $shm = sprintf('/brkphp-guide-%d-%d', getmypid(), $i);
            $file = tempnam(sys_get_temp_dir(), 'brkphp-guide');
            file_put_contents($file, $code);
            $cmd = [PHP_BINARY, '-n', '-d', 'extension=' . getenv('BRKPHP_EXT'),
                    '-d', "include_path=.:$src/bindings/php/lib:/usr/share/php", $file];
            $proc = proc_open($cmd, [1 => ['pipe', 'w'], 2 => ['redirect', 1]], $pipes, null,
                ['BREAKERD_SHM' => $shm, 'LD_LIBRARY_PATH' => getenv('LD_LIBRARY_PATH')]);
            $out = stream_get_contents($pipes[1]);
            $rc = proc_close($proc);
            unlink($file);
            Segment::unlink($shm);
            $this->assertSame(0, $rc, sprintf("example %d of %s failed:\n%s\n--- output:\n%s", $i + 1, $guide, $code, $out));
            $this->assertDoesNotMatchRegularExpression('/(Warning|Notice|Deprecated|Fatal error):/', $out,
                sprintf("example %d of %s warned:\n%s", $i + 1, $guide, $out));
        }
    }
}

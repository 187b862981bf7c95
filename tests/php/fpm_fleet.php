<?php
// The PHP-FPM fleet test: Debian's php-fpm8.2 (pm = static, 8 children,
// pm.max_requests = 200 so children are recycled during the test) behind
// nginx-light's fastcgi_pass, every request running fpm_app.php, which
// calls a loopback upstream (tests/ruby/fleet_upstream.py) through Guzzle
// and Breakerd\Guzzle\BreakerMiddleware. Checks, on one shared breaker
// (threshold 3, open 1 s):
//   0. the extension is listed by phpinfo() through FPM, and the FPM
//      master never mapped the segment (children attach after fork);
//   A. upstream down (500s): all children together send it at most
//      threshold + 7 + probes;
//   B. while it stays down, one probe at a time reaches it;
//   C. recovery closes the breaker for every child;
//   D. kill -9 of the child holding the probe (upstream hangs) is
//      reclaimed by the next refused caller;
//   E. a 429 with Retry-After seen by one child cools every child, a PHP
//      CLI process and a Python process on the same segment (the breaker
//      has implicit_pace off: by default its implicit pace takes the 429);
//   F. recycling (pm.max_requests) and the kill lost nothing: no lease
//      left, every admitted call accounted for.
// FPM runs its children as root when the test is root (user = root, -R);
// as another user, as that user. Loopback only; bounded time (each wait
// has a deadline). Run by tests/php/fpm_fleet.sh.
declare(strict_types=1);

use Breakerd\Segment;

const CHILDREN = 8;
const THRESHOLD = 3;
$SRC = getenv('BRKPHP_SRCDIR');
$EXT = getenv('BRKPHP_EXT');
$PYTHON = getenv('BRKPHP_PYTHON') ?: null;
$SHM = '/brkphp-fpm-' . getmypid();
putenv("BREAKERD_SHM=$SHM");
$failures = 0;

function check(bool $ok, string $what): bool
{
    global $failures;
    echo ($ok ? 'ok' : 'not ok'), " - $what\n";
    if (!$ok) {
        $failures++;
    }
    return $ok;
}

function wait_until(float $seconds, string $what, callable $fn)
{
    $deadline = microtime(true) + $seconds;
    while (!($v = $fn())) {
        if (microtime(true) > $deadline) {
            throw new RuntimeException("timed out after $seconds s waiting for $what");
        }
        usleep(50000);
    }
    return $v;
}

/** [status, body] of GET http://127.0.0.1:PORT/PATH (status 0: no answer). */
function get(int $port, string $path, float $timeout = 10): array
{
    $ctx = stream_context_create(['http' => ['timeout' => $timeout, 'ignore_errors' => true]]);
    $body = @file_get_contents("http://127.0.0.1:$port$path", false, $ctx);
    if ($body === false || !isset($http_response_header[0])) {
        return [0, 'client error'];
    }
    return [(int)explode(' ', $http_response_header[0])[1], $body];
}

function free_port(): int
{
    $s = stream_socket_server('tcp://127.0.0.1:0');
    $port = (int)substr(strrchr(stream_socket_get_name($s, false), ':'), 1);
    fclose($s);
    return $port;
}

function children_of(int $pid): array
{
    $out = [];
    foreach (glob('/proc/[0-9]*/stat') as $f) {
        $s = @file_get_contents($f);
        if ($s === false) {
            continue;
        }
        $fields = explode(' ', substr($s, strrpos($s, ')') + 2));
        if ((int)$fields[1] === $pid) {
            $out[] = (int)basename(dirname($f));
        }
    }
    sort($out);
    return $out;
}

/** CLIENTS processes call /call for SECONDS; returns the bodies. */
function load(int $port, float $seconds, int $clients = 8): array
{
    $dir = sys_get_temp_dir();
    $pids = [];
    for ($i = 0; $i < $clients; $i++) {
        $file = "$dir/brkphp-load-" . getmypid() . "-$i";
        @unlink($file);
        $pid = pcntl_fork();
        if ($pid === 0) {
            $deadline = microtime(true) + $seconds;
            $out = '';
            while (microtime(true) < $deadline) {
                $out .= str_replace("\n", ' ', trim(get($port, '/call', 30)[1])) . "\n";
            }
            file_put_contents($file, $out);
            posix_kill(getmypid(), SIGKILL); // no shutdown of the parent's objects here
        }
        $pids[$i] = [$pid, $file];
    }
    $bodies = [];
    foreach ($pids as [$pid, $file]) {
        pcntl_waitpid($pid, $st);
        foreach (file($file, FILE_IGNORE_NEW_LINES) ?: [] as $line) {
            $bodies[] = $line;
        }
        @unlink($file);
    }
    return $bodies;
}

final class Upstream
{
    public int $port;
    private $proc;
    private array $pipes = [];

    public function __construct(string $src)
    {
        $this->proc = proc_open(['/usr/bin/python3', "$src/tests/ruby/fleet_upstream.py"],
            [0 => ['pipe', 'r'], 1 => ['pipe', 'w']], $this->pipes);
        $this->port = (int)fgets($this->pipes[1]);
    }

    public function mode(string $m, int $ra = 1): void
    {
        get($this->port, "/mode?m=$m&ra=$ra");
    }

    public function stats(): array
    {
        return json_decode(get($this->port, '/stats')[1], true);
    }

    public function reset(): void
    {
        get($this->port, '/reset');
    }

    public function stop(): void
    {
        fclose($this->pipes[0]);
        fclose($this->pipes[1]);
        proc_close($this->proc);
    }
}

function bodies_of(array $bodies, string $needle): array
{
    return array_values(array_filter($bodies, fn($b) => str_contains($b, $needle)));
}

function pids_of(array $bodies): array
{
    $p = array_values(array_unique(array_map(fn($b) => (int)explode(' ', $b)[0], $bodies)));
    sort($p);
    return $p;
}

$dir = sys_get_temp_dir() . '/brkphp-fpm-' . getmypid();
@mkdir($dir, 0755, true);
$fpm = $nginx = $up = null;
$fpmPid = 0;
try {
    $up = new Upstream($SRC);
    $fport = free_port();
    $nport = free_port();
    $root = posix_getuid() === 0;
    $user = $root ? "user = root\ngroup = root\n" : '';
    file_put_contents("$dir/fpm.conf", <<<CONF
[global]
pid = $dir/fpm.pid
error_log = $dir/fpm.log
daemonize = no

[fleet]
$user
listen = 127.0.0.1:$fport
pm = static
pm.max_children = 8
pm.max_requests = 200
clear_env = no
catch_workers_output = yes
request_terminate_timeout = 120

CONF);
    $env = ['BREAKERD_SHM' => $SHM, 'BRKPHP_SRCDIR' => $SRC, 'BRKPHP_UPSTREAM_PORT' => (string)$up->port,
            'LD_LIBRARY_PATH' => getenv('LD_LIBRARY_PATH'), 'PATH' => getenv('PATH')];
    $cmd = ['/usr/sbin/php-fpm8.2', '-n', '-d', "extension=$EXT", '-y', "$dir/fpm.conf", '-F'];
    if ($root) {
        $cmd[] = '-R';
    }
    $fpm = proc_open($cmd, [1 => ['file', "$dir/fpm.out", 'w'], 2 => ['file', "$dir/fpm.out", 'a']],
        $pipes, null, $env);
    $fpmPid = proc_get_status($fpm)['pid'];
    $nginxUser = $root ? 'user root root;' : '';
    @mkdir("$dir/tmp");
    file_put_contents("$dir/nginx.conf", <<<CONF
$nginxUser
worker_processes 1;
daemon on;
pid $dir/nginx.pid;
error_log $dir/nginx-error.log warn;
events { worker_connections 1024; }
http {
    access_log off;
    client_body_temp_path $dir/tmp/body;
    proxy_temp_path $dir/tmp/proxy;
    fastcgi_temp_path $dir/tmp/fastcgi;
    uwsgi_temp_path $dir/tmp/uwsgi;
    scgi_temp_path $dir/tmp/scgi;
    server {
        listen 127.0.0.1:$nport;
        location / {
            include /etc/nginx/fastcgi_params;
            fastcgi_param SCRIPT_FILENAME $SRC/tests/php/fpm_app.php;
            fastcgi_read_timeout 120s;
            fastcgi_pass 127.0.0.1:$fport;
        }
    }
}

CONF);
    exec('/usr/sbin/nginx -p ' . escapeshellarg($dir) . ' -c ' . escapeshellarg("$dir/nginx.conf") .
         ' -e ' . escapeshellarg("$dir/nginx-error.log") . ' 2>&1', $out, $rc);
    if ($rc !== 0) {
        throw new RuntimeException('nginx did not start: ' . implode("\n", $out));
    }
    $nginx = true;
    wait_until(30, 'FPM\'s 8 children behind nginx', fn() =>
        count(children_of($fpmPid)) === CHILDREN && get($nport, '/pid')[0] === 200);

    // 0. the extension in FPM, attached in the children only
    [$st, $body] = get($nport, '/info');
    check($st === 200 && str_contains($body, 'breakerd support'), 'phpinfo() through FPM lists the breakerd extension');
    $seg = Segment::attach($SHM);
    $name = "127.0.0.1:{$up->port}";
    // the settings of fpm_app.php (whoever comes first creates the record)
    $br = $seg->breaker($name, ['failure_threshold' => 3, 'open' => '1s', 'max_open' => '1s', 'probe_timeout' => '60s',
                               'implicit_pace' => false]);
    $up->mode('ok');
    $bodies = load($nport, 1);
    check(count($bodies) > 0 && count(bodies_of($bodies, ' upstream 200')) === count($bodies),
        'healthy upstream: every call goes through (' . count($bodies) . ' calls)');
    $maps = (string)@file_get_contents("/proc/$fpmPid/maps");
    $child = children_of($fpmPid)[0];
    check(!str_contains($maps, $SHM) && str_contains((string)@file_get_contents("/proc/$child/maps"), $SHM),
        'the FPM master never mapped the segment; its children attached after fork');

    // A. upstream down
    $up->mode('down');
    $up->reset();
    $probes0 = $br->info()['counters']['probes'];
    $bodies = load($nport, 3);
    $hits = $up->stats()['hits'];
    $probes = $br->info()['counters']['probes'] - $probes0;
    $bound = THRESHOLD + (CHILDREN - 1) + $probes;
    $refused = bodies_of($bodies, ' refused ');
    echo '# down: ', count($bodies), " calls, $hits reached the upstream, $probes probe admissions, bound $bound\n";
    check($hits <= $bound, "upstream down: $hits calls reached it, at most threshold + 7 + probes = $bound");
    check($hits >= THRESHOLD, "upstream down: the threshold's " . THRESHOLD . " failures reached it ($hits)");
    check(count($refused) > count($bodies) / 2, 'upstream down: most calls were refused without calling it (' . count($refused) . ')');
    check(count(pids_of($refused)) >= CHILDREN, 'upstream down: calls were refused by ' . count(pids_of($refused)) . ' children (8 slots, recycled)');

    // B. one probe at a time
    $up->reset();
    load($nport, 2.5);
    $st = $up->stats();
    check($st['max_in_flight'] === 1 && $st['hits'] >= 1,
        "half-open: one probe at a time reached the upstream (max {$st['max_in_flight']} at once, {$st['hits']} probes)");

    // C. recovery closes it for every child
    $up->mode('ok');
    wait_until(10, 'the breaker to close', function () use ($nport, $br) {
        get($nport, '/call');
        return $br->state() === 'closed';
    });
    $bodies = load($nport, 1.5);
    $ok = bodies_of($bodies, ' upstream 200');
    check(count($ok) === count($bodies) && count(pids_of($ok)) >= CHILDREN,
        'recovered: every call goes through, served by ' . count(pids_of($ok)) . ' children (' . count($bodies) . ' calls)');

    // D. kill -9 of the child holding the probe
    $up->mode('down');
    wait_until(20, 'the breaker to open', function () use ($nport, $br) {
        get($nport, '/call');
        return $br->state() === 'open';
    });
    $up->mode('hang');
    usleep(1100000); // the cooling period ends
    $holder = pcntl_fork();
    if ($holder === 0) {
        get($nport, '/call', 90);
        posix_kill(getmypid(), SIGKILL);
    }
    $lease = wait_until(10, 'a probe lease', function () use ($br) {
        foreach ($br->info()['leases'] as $l) {
            if ($l['kind'] === 'probe') {
                return $l;
            }
        }
        return null;
    });
    $reclaimed0 = $br->info()['counters']['reclaimed'];
    posix_kill($lease['pid'], SIGKILL);
    $up->mode('ok');
    wait_until(10, 'a refused caller to reclaim', function () use ($nport, $br, $reclaimed0) {
        get($nport, '/call');
        return $br->info()['counters']['reclaimed'] > $reclaimed0;
    });
    check(true, 'kill -9: the dead probe holder\'s lease was reclaimed by the next refused caller');
    pcntl_waitpid($holder, $s);
    wait_until(20, 'the breaker to close after the reclaim', function () use ($nport, $br) {
        get($nport, '/call');
        return $br->state() === 'closed';
    });
    wait_until(30, 'FPM to replace the killed child', fn() =>
        count(children_of($fpmPid)) === CHILDREN && !in_array($lease['pid'], children_of($fpmPid), true));
    $bodies = load($nport, 1);
    check(count(bodies_of($bodies, ' upstream 200')) === count($bodies), 'after the reclaim every call goes through');

    // E. a 429 with Retry-After cools every child, a PHP CLI and Python
    // every cooling period is capped at max_open (1 s above): raised so
    // the 4 s Retry-After is kept whole
    $br->configure(['max_open' => '10s']);
    $up->mode('429', 4);
    $up->reset();
    $first = get($nport, '/call')[1];
    check(str_ends_with(trim($first), 'upstream 429'), '429: one child got it (' . trim($first) . ')');
    $bodies = load($nport, 1.5);
    $cooled = bodies_of($bodies, ' refused cooling');
    check($up->stats()['hits'] === 1, '429: the upstream was called once (' . $up->stats()['hits'] . ') while the Retry-After runs');
    check(count($cooled) === count($bodies) && count(pids_of($cooled)) >= CHILDREN,
        '429: every call refused with "cooling", by ' . count(pids_of($cooled)) . ' children');
    $code = 'try { Breakerd\Segment::attach()->breaker($argv[1])->acquire()->cancel(); echo "admitted"; }'
          . ' catch (Breakerd\Cooling $e) { printf("cooling %.1f", $e->getWait()); }';
    $out = shell_exec(implode(' ', array_map('escapeshellarg',
        [PHP_BINARY, '-n', '-d', "extension=$EXT", '-r', $code, $name])));
    check(str_starts_with((string)$out, 'cooling'), "429: a PHP CLI process on the same segment is cooled too ($out)");
    if ($PYTHON) {
        $py = "import breakerd, sys\nbr = breakerd.attach(sys.argv[1]).breaker(sys.argv[2])\n"
            . "try:\n    br.acquire().cancel()\n    print('admitted')\n"
            . "except breakerd.Cooling as e:\n    print('cooling %.1f' % e.wait)\n";
        $out = trim((string)shell_exec(implode(' ', array_map('escapeshellarg', [$PYTHON, '-c', $py, $SHM, $name]))));
        check(str_starts_with($out, 'cooling'), "429: a Python process on the same segment is cooled too ($out)");
    } else {
        echo "# skip: no Python with the breakerd package (tests/python/run.sh skipped)\n";
    }
    check($br->state() === 'closed', '429: cooling, not opening (the breaker stays closed)');

    // F. nothing lost across recycling and the kill
    $info = $br->info();
    $c = $info['counters'];
    $accounted = $c['successes'] + $c['failures'] + $c['healthy_errors'] + $c['ignored'] + $c['cancelled']
        + $c['throttled'] + $c['stale'] + $c['reclaimed'];
    echo "# counters: ", json_encode($c), "\n";
    check($info['leases'] === [] && $info['in_flight'] === 0 && $info['probes_in_flight'] === 0,
        'no lease left after recycling (pm.max_requests = 200) and the kill');
    check($c['allowed'] === $accounted, "every admitted call accounted for: allowed {$c['allowed']} = verdicts + cancels + stale + reclaimed $accounted");
} catch (RuntimeException $e) {
    check(false, $e->getMessage());
    echo @file_get_contents("$dir/fpm.out"), @file_get_contents("$dir/fpm.log"), @file_get_contents("$dir/nginx-error.log");
} finally {
    if ($nginx) {
        exec('/usr/sbin/nginx -p ' . escapeshellarg($dir) . ' -c ' . escapeshellarg("$dir/nginx.conf") . ' -s stop 2>/dev/null');
    }
    if ($fpm) {
        posix_kill($fpmPid, SIGQUIT);
        $deadline = microtime(true) + 10;
        while (proc_get_status($fpm)['running'] && microtime(true) < $deadline) {
            usleep(50000);
        }
        if (proc_get_status($fpm)['running']) {
            posix_kill($fpmPid, SIGKILL);
        }
        proc_close($fpm);
    }
    $up?->stop();
    Segment::unlink($SHM);
    exec('rm -rf ' . escapeshellarg($dir));
}
echo 'fpm fleet: ', $failures === 0 ? 'PASS' : "FAIL ($failures)", "\n";
exit($failures === 0 ? 0 : 1);

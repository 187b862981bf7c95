<?php
// The script every PHP-FPM child of the fleet test runs (fpm_fleet.php):
//   /call  one upstream call through Guzzle + Breakerd\Guzzle\BreakerMiddleware,
//          answers "PID upstream STATUS" or "PID refused CAUSE WAIT"
//   /pid   "PID"
//   /info  phpinfo(INFO_MODULES)
// The segment is $BREAKERD_SHM, attached lazily by the first request of
// each child and re-used by its later ones (Segment::attach()).
declare(strict_types=1);

require_once '/usr/share/php/GuzzleHttp/autoload.php';
require_once getenv('BRKPHP_SRCDIR') . '/bindings/php/lib/Breakerd/autoload.php';

use Breakerd\Guzzle\BreakerMiddleware;
use GuzzleHttp\Client;
use GuzzleHttp\HandlerStack;

$path = parse_url($_SERVER['REQUEST_URI'] ?? '/', PHP_URL_PATH);
header('Content-Type: text/plain');
if ($path === '/pid') {
    echo getmypid(), "\n";
    return;
}
if ($path === '/info') {
    phpinfo(INFO_MODULES);
    return;
}
$stack = HandlerStack::create();
$stack->push(BreakerMiddleware::create(Breakerd\Segment::attach(), [
    'failure_threshold' => 3, 'open' => '1s', 'max_open' => '1s', 'probe_timeout' => '60s',
    // off: part E of fpm_fleet.php tests the shared Retry-After cooling
    'implicit_pace' => false,
]), 'breakerd');
$client = new Client(['handler' => $stack, 'http_errors' => false, 'timeout' => 90]);
try {
    $res = $client->get('http://127.0.0.1:' . getenv('BRKPHP_UPSTREAM_PORT') . '/work');
    echo getmypid(), ' upstream ', $res->getStatusCode(), "\n";
} catch (Breakerd\Refused $e) {
    printf("%d refused %s %.3f\n", getmypid(), $e->getCause(), $e->getWait());
} catch (GuzzleHttp\Exception\TransferException $e) {
    echo getmypid(), ' error ', get_class($e), "\n";
}

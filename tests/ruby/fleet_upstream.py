#!/usr/bin/env python3
"""fleet_upstream.py - the loopback upstream of the Puma fleet test.

  GET /work            one upstream call, answered by the current mode:
                       ok: 200; down: 500 after DOWN_DELAY s; hang: waits
                       until the mode changes (at most 60 s), then 200;
                       429: 429 with "Retry-After: RA"
  GET /mode?m=M&ra=N   set the mode (and the Retry-After seconds)
  GET /stats           JSON: hits (of /work since the last reset),
                       in_flight, max_in_flight
  GET /reset           zero hits and max_in_flight

Listens on 127.0.0.1 port 0, prints the port on the first line of stdout,
serves until its stdin closes (the test ends) or it is killed.
"""
import http.server
import json
import sys
import threading
import time
import urllib.parse

DOWN_DELAY = 0.3
lock = threading.Lock()
changed = threading.Condition(lock)
state = {"mode": "ok", "ra": 1, "hits": 0, "in_flight": 0, "max_in_flight": 0}


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"

    def reply(self, code, body, headers=()):
        data = body.encode()
        self.send_response(code)
        self.send_header("Content-Length", str(len(data)))
        for k, v in headers:
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        url = urllib.parse.urlparse(self.path)
        q = urllib.parse.parse_qs(url.query)
        if url.path == "/work":
            self.work()
        elif url.path == "/mode":
            with lock:
                state["mode"] = q["m"][0]
                state["ra"] = int(q.get("ra", ["1"])[0])
                changed.notify_all()
            self.reply(200, "ok\n")
        elif url.path == "/stats":
            with lock:
                self.reply(200, json.dumps(state))
        elif url.path == "/reset":
            with lock:
                state["hits"] = 0
                state["max_in_flight"] = state["in_flight"]
            self.reply(200, "ok\n")
        else:
            self.reply(404, "no such path\n")

    def work(self):
        with lock:
            state["hits"] += 1
            state["in_flight"] += 1
            state["max_in_flight"] = max(state["max_in_flight"], state["in_flight"])
            mode, ra = state["mode"], state["ra"]
            if mode == "hang":
                deadline = time.monotonic() + 60
                while state["mode"] == "hang" and time.monotonic() < deadline:
                    changed.wait(deadline - time.monotonic())
        try:
            if mode == "down":
                time.sleep(DOWN_DELAY)
                self.reply(500, "down\n")
            elif mode == "429":
                self.reply(429, "slow down\n", [("Retry-After", str(ra))])
            else:
                self.reply(200, "ok\n")
        except OSError:
            pass  # the caller was killed
        finally:
            with lock:
                state["in_flight"] -= 1

    def log_message(self, *args):
        pass


def main():
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    srv.daemon_threads = True
    print(srv.server_address[1], flush=True)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    sys.stdin.read()  # until the test closes our stdin


main()

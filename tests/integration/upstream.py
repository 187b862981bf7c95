#!/usr/bin/env python3
"""upstream.py [DELAY_S] - a slow HTTP upstream on loopback that counts the
requests it is serving at once.

  GET /work   in_flight += 1; max = max(max, in_flight); sleep DELAY_S
              (default 0.2); in_flight -= 1; 200 "ok"
  GET /max    the largest in_flight seen so far, as a decimal number
  GET /stats  "max M served S"

Listens on 127.0.0.1, port 0 (the kernel picks one), prints the port on the
first line of stdout, and serves until it is killed or its stdin closes.
"""
import http.server
import sys
import threading
import time

DELAY = float(sys.argv[1]) if len(sys.argv) > 1 else 0.2

lock = threading.Lock()
state = {"in_flight": 0, "max": 0, "served": 0}


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"

    def reply(self, code, body):
        data = body.encode()
        self.send_response(code)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        if self.path == "/work":
            with lock:
                state["in_flight"] += 1
                state["max"] = max(state["max"], state["in_flight"])
            try:
                time.sleep(DELAY)
            finally:
                with lock:
                    state["in_flight"] -= 1
                    state["served"] += 1
            self.reply(200, "ok\n")
        elif self.path == "/max":
            with lock:
                self.reply(200, "%d\n" % state["max"])
        elif self.path == "/stats":
            with lock:
                self.reply(200, "max %d served %d\n" % (state["max"],
                                                        state["served"]))
        else:
            self.reply(404, "no such path\n")

    def log_message(self, *args):
        pass


def main():
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    srv.daemon_threads = True
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    print(srv.server_address[1], flush=True)
    # Serve until our parent closes our stdin (or kills us).
    try:
        sys.stdin.read()
    except (KeyboardInterrupt, OSError):
        pass
    srv.shutdown()


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""fleet_sign.py - what a holder of the fleet key (or an attacker without
it) can put on the channel, for the fleet trust tests (fleet_trust.sh):

  fleet_sign.py sign KEYFILE JSON    the v2 message of JSON's fields (v,
                                     host, boot, seq, sent_ms, kind, name,
                                     remaining_ms, mode, ...; in that
                                     order) tagged with KEYFILE's first key
                                     (docs/design/fleet.md "Message format
                                     v2"); KEYFILE "-": no tag
  fleet_sign.py flood KEYFILE PORT HOST NAME N
                                     PUBLISH on channel breakerd, in one
                                     pipeline, N signed messages from HOST
                                     alternating open (30 s) and reset of
                                     NAME, seq 1..N; prints how many sent
                                     (KEYFILE "-": version 1, unsigned)
"""
import hashlib
import hmac
import json
import socket
import sys
import time

ORDER = ["v", "host", "boot", "seq", "sent_ms", "kind", "name",
         "remaining_ms", "mode", "rate_milli", "reason"]


def key_of(path):
    with open(path, "rb") as f:
        for line in f:
            line = line.strip()
            if line and not line.startswith(b"#"):
                return line
    raise SystemExit("fleet_sign.py: no key in " + path)


def sign(key, fields):
    d = {k: fields[k] for k in ORDER if k in fields}
    text = json.dumps(d, separators=(",", ":"))
    if key is None:
        return text
    tag = hmac.new(key, text.encode(), hashlib.sha256).hexdigest()
    return text[:-1] + ',"tag":"' + tag + '"}'


def resp(*args):
    out = b"*%d\r\n" % len(args)
    for a in args:
        a = a if isinstance(a, bytes) else str(a).encode()
        out += b"$%d\r\n%s\r\n" % (len(a), a)
    return out


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "sign":
        key = None if sys.argv[2] == "-" else key_of(sys.argv[2])
        print(sign(key, json.loads(sys.argv[3])))
        return 0
    if len(sys.argv) == 7 and sys.argv[1] == "flood":
        key = None if sys.argv[2] == "-" else key_of(sys.argv[2])
        port, host, name, n = int(sys.argv[3]), sys.argv[4], sys.argv[5], int(sys.argv[6])
        now = int(time.time() * 1000)
        buf = bytearray()
        for i in range(1, n + 1):
            f = {"v": 2, "host": host, "boot": now, "seq": i, "sent_ms": now,
                 "name": name}
            if key is None:
                f = {"v": 1, "host": host, "seq": i, "sent_ms": now,
                     "name": name}
            if i % 2:
                f["kind"], f["remaining_ms"] = "open", 30000
            else:
                f["kind"] = "reset"
            buf += resp("PUBLISH", "breakerd", sign(key, f))
        s = socket.create_connection(("127.0.0.1", port))
        s.sendall(bytes(buf))
        s.shutdown(socket.SHUT_WR)
        got = b""
        while got.count(b"\r\n") < n:
            chunk = s.recv(65536)
            if not chunk:
                break
            got += chunk
        s.close()
        print(n)
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())

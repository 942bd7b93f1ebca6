#!/usr/bin/python3
"""Loopback TCP relay that reads the TLS 1.3 handshake as it passes.

    tlswatch.py LISTEN_PORT TARGET_PORT LOG

Accepts on 127.0.0.1:LISTEN_PORT, relays each connection to
127.0.0.1:TARGET_PORT unchanged, and appends one line per connection to LOG
once the server's (last) ServerHello has gone by:

    conn=N version=TLSv1.3 group=X25519MLKEM768 hrr=no offered=X25519MLKEM768

group is the key_share group of the ServerHello, hrr says whether a
HelloRetryRequest came first, offered lists the key shares of the first
ClientHello. Protocols that start in clear text (SMTP, PostgreSQL and
MySQL STARTTLS) need nothing special: the relay looks for a TLS handshake
record in each direction and ignores the bytes before it. The handshake is
clear text up to the ServerHello; nothing after it is read.
"""
import os
import socket
import sys
import threading

# The group table the provider and its tools share (tls-groups/groups.tsv,
# written from tls-groups/src/lib.rs): code point -> OpenSSL's name.
GROUPS_TSV = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                          "..", "..", "tls-groups", "groups.tsv")


def read_groups(path=GROUPS_TSV):
    groups = {}
    with open(path) as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            name, code_point = line.split("\t")[:2]
            groups[int(code_point, 16)] = name
    return groups


GROUPS = read_groups()
HRR_RANDOM = bytes.fromhex(
    "CF21AD74E59A6111BE1D8C021E65B891C2A211167ABB8C5E079E09E2C8A8339C")


def name(group):
    return GROUPS.get(group, "0x%04x" % group)


def extensions(body, pos):
    """(type, data) of the extensions block starting at body[pos]."""
    if pos + 2 > len(body):
        return
    end = pos + 2 + int.from_bytes(body[pos:pos + 2], "big")
    pos += 2
    while pos + 4 <= end:
        etype = int.from_bytes(body[pos:pos + 2], "big")
        elen = int.from_bytes(body[pos + 2:pos + 4], "big")
        yield etype, body[pos + 4:pos + 4 + elen]
        pos += 4 + elen


def handshakes(buf, msg_type):
    """Complete handshake messages of msg_type in buf (records 0x16 0x03 0x0x)."""
    found, i = [], 0
    while True:
        i = buf.find(b"\x16\x03", i)
        if i < 0 or i + 9 > len(buf):
            return found
        rlen = int.from_bytes(buf[i + 3:i + 5], "big")
        hlen = int.from_bytes(buf[i + 6:i + 9], "big")
        if buf[i + 2] > 4 or buf[i + 5] != msg_type or hlen + 4 > rlen:
            i += 1
            continue
        if i + 5 + rlen > len(buf):
            return found  # not all here yet
        found.append(buf[i + 9:i + 9 + hlen])
        i += 5 + rlen


class Conn:
    def __init__(self, number, log):
        self.number, self.log = number, log
        self.c2s, self.s2c = bytearray(), bytearray()
        self.offered, self.done = None, False
        self.lock = threading.Lock()

    def client_bytes(self, data):
        with self.lock:
            if self.offered is not None or self.done:
                return
            self.c2s += data
            hellos = handshakes(self.c2s, 1)
            if not hellos:
                return
            ch = hellos[0]
            pos = 2 + 32
            pos += 1 + ch[pos]
            pos += 2 + int.from_bytes(ch[pos:pos + 2], "big")
            pos += 1 + ch[pos]
            shares = []
            for etype, data in extensions(ch, pos):
                if etype == 0x33:
                    j = 2
                    while j + 4 <= len(data):
                        shares.append(name(int.from_bytes(data[j:j + 2], "big")))
                        j += 4 + int.from_bytes(data[j + 2:j + 4], "big")
            self.offered = ",".join(shares) or "none"
            self.c2s = bytearray()

    def server_bytes(self, data):
        with self.lock:
            if self.done:
                return
            self.s2c += data
            hellos = handshakes(self.s2c, 2)
            hrr = False
            for sh in hellos:
                is_hrr = sh[2:34] == HRR_RANDOM
                pos = 2 + 32
                pos += 1 + sh[pos]
                pos += 3
                version, group = "TLSv1.2", None
                for etype, data in extensions(sh, pos):
                    if etype == 0x2B and data == b"\x03\x04":
                        version = "TLSv1.3"
                    elif etype == 0x33 and len(data) >= 2:
                        group = int.from_bytes(data[0:2], "big")
                if is_hrr:
                    hrr = True
                    continue
                self.write("version=%s group=%s hrr=%s" % (
                    version, name(group) if group is not None else "n/a",
                    "yes" if hrr else "no"))
                return

    def write(self, what):
        self.done = True
        with open(self.log, "a") as f:
            f.write("conn=%d %s offered=%s\n" % (self.number, what, self.offered))

    def closed(self):
        with self.lock:
            # A connection the client sent nothing on (a port probe) is not logged.
            if not self.done and (self.c2s or self.offered):
                self.write("version=none group=none hrr=n/a")


def pump(src, dst, feed, conn):
    try:
        while True:
            data = src.recv(65536)
            if not data:
                break
            feed(data)
            dst.sendall(data)
    except OSError:
        pass
    finally:
        for s in (dst, src):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        conn.closed()


def main():
    listen_port, target_port, log = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    server = socket.socket()
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(("127.0.0.1", listen_port))
    server.listen(16)
    number = 0
    while True:
        client, _ = server.accept()
        number += 1
        try:
            upstream = socket.create_connection(("127.0.0.1", target_port), timeout=10)
            upstream.settimeout(None)
        except OSError as e:
            with open(log, "a") as f:
                f.write("conn=%d version=none group=none hrr=n/a offered=none (%s)\n" % (number, e))
            client.close()
            continue
        conn = Conn(number, log)
        threading.Thread(target=pump, args=(client, upstream, conn.client_bytes, conn), daemon=True).start()
        threading.Thread(target=pump, args=(upstream, client, conn.server_bytes, conn), daemon=True).start()


if __name__ == "__main__":
    main()

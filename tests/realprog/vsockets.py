# SPDX-License-Identifier: MIT
# vsockets.py - sockets whose peer is outside the tree, and inside it
# (issue 21).  A wait for input on a connected socket whose other end a
# process outside the tree holds must not be jumped over on virtual time;
# one whose other end is the tree's still jumps.  Prints facts, never
# times, but for the waits that end at their timeout (whole seconds).
#
#   python3 vsockets.py serve unix|tcp ADDRFILE DELAY
#       outside: listen, write the address to ADDRFILE, accept one
#       connection, send "hi" DELAY s after it came, wait for its end
#   python3 vsockets.py client ADDRFILE TIMEOUT
#       connect, wait TIMEOUT s for input (select), print what came
#   python3 vsockets.py server ADDRFILE TIMEOUT
#       listen (TCP, loopback), write the address, accept one connection
#       (no timeout), then wait TIMEOUT s for input on it
#   python3 vsockets.py send ADDRFILE DELAY
#       outside: connect, send "hi" after DELAY s
#   python3 vsockets.py dserve ADDRFILE DELAY
#       outside: a UNIX datagram socket bound to a path, which answers
#       the first datagram DELAY s after it came
#   python3 vsockets.py dclient ADDRFILE TIMEOUT
#       a UNIX datagram socket bound to a path of its own, connected to
#       the server's: sends, waits TIMEOUT s for the answer
#   python3 vsockets.py pair unix|tcp
#       the tree alone: a child sends "hi" after 100 s to its parent,
#       which waits 200 s for it
#   python3 vsockets.py orphan [DELAY [zombie]]
#       the tree alone: a child makes a socket pair, forks one child for
#       each end and exits (reaped: the kernel names it, gone, as the
#       pair's peer; with zombie, not reaped until the end); one end
#       sends "hi" after DELAY s (100), the other waits 200 s for it
#   python3 vsockets.py daemon DIR
#       the tree alone: a daemon listens on a UNIX path and forks, its
#       first process exits (the kernel names it as the peer); the
#       second answers after 100 s, the client waits 200 s
import os
import select
import socket
import sys
import time


def address(path):
    for _ in range(500):
        try:
            with open(path) as f:
                a = f.read()
            if a.endswith("\n"):
                a = a.strip()
                return ("127.0.0.1", int(a)) if a.isdigit() else a
        except FileNotFoundError:
            pass
        time.sleep(0.01)
    sys.exit("no address in " + path)


def ended(pid):
    """Whether pid is a zombie (or gone): /proc's state."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            st = f.read()
    except FileNotFoundError:
        return True
    return st[st.rindex(")") + 2] in "ZX"


def listener(kind, path):
    if kind == "unix":
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        where = path + ".sock"
        s.bind(where)
    else:
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.bind(("127.0.0.1", 0))
        where = str(s.getsockname()[1])
    s.listen(1)
    with open(path + ".tmp", "w") as f:
        f.write(where + "\n")
    os.rename(path + ".tmp", path)
    return s


def connect(a):
    s = socket.socket(socket.AF_UNIX if isinstance(a, str) else
                      socket.AF_INET, socket.SOCK_STREAM)
    s.connect(a)
    return s


def wait_input(c, timeout, what):
    t0 = time.monotonic()
    r, _, _ = select.select([c], [], [], timeout)
    took = time.monotonic() - t0
    if r:
        print("%s: ready [%s]" % (what, c.recv(16).decode().strip()))
    else:
        print("%s: timed out after %.1f s" % (what, took))
    sys.stdout.flush()


cmd = sys.argv[1]
if cmd == "serve":
    c, _ = listener(sys.argv[2], sys.argv[3]).accept()
    time.sleep(float(sys.argv[4]))
    try:
        c.sendall(b"hi\n")
        c.recv(16)
    except OSError:
        pass
elif cmd == "client":
    a = address(sys.argv[2])
    wait_input(connect(a), float(sys.argv[3]),
               "client of a server outside (%s)" %
               ("unix" if isinstance(a, str) else "tcp"))
elif cmd == "server":
    c, _ = listener("tcp", sys.argv[2]).accept()
    wait_input(c, float(sys.argv[3]), "server, its client outside (tcp)")
elif cmd == "send":
    c = connect(address(sys.argv[2]))
    time.sleep(float(sys.argv[3]))
    c.sendall(b"hi\n")
    c.recv(16)
elif cmd == "dserve":
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    s.bind(sys.argv[2] + ".sock")
    with open(sys.argv[2] + ".tmp", "w") as f:
        f.write(sys.argv[2] + ".sock\n")
    os.rename(sys.argv[2] + ".tmp", sys.argv[2])
    m, a = s.recvfrom(16)
    time.sleep(float(sys.argv[3]))
    s.sendto(b"hi\n", a)
elif cmd == "dclient":
    c = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    c.bind(sys.argv[2] + ".client")
    c.connect(address(sys.argv[2]))
    c.send(b"q")
    wait_input(c, float(sys.argv[3]), "datagram client of a server outside (unix)")
elif cmd == "daemon":
    where = sys.argv[2] + "/daemon"
    if os.fork() == 0:
        s = listener("unix", where)
        if os.fork() == 0:
            c, _ = s.accept()
            time.sleep(100)
            try:
                c.sendall(b"hi\n")
                c.recv(16)
            except OSError:
                pass
        os._exit(0)
    c = connect(address(where))
    t0 = time.monotonic()
    r, _, _ = select.select([c], [], [], 200)
    print("daemon (unix): %s after %.6f s" % ("ready" if r else "timed out",
                                             time.monotonic() - t0))
elif cmd == "pair":
    kind = sys.argv[2]
    if kind == "unix":
        a, b = socket.socketpair()
    else:
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.bind(("127.0.0.1", 0))
        s.listen(1)
    pid = os.fork()
    if pid == 0:
        if kind != "unix":
            b = connect(s.getsockname())
        time.sleep(100)
        b.sendall(b"hi\n")
        os._exit(0)
    if kind != "unix":
        a, _ = s.accept()
    t0 = time.monotonic()
    r, _, _ = select.select([a], [], [], 200)
    print("pair (%s): %s after %.6f s" % (kind, "ready" if r else "timed out",
                                           time.monotonic() - t0))
    os.waitpid(pid, 0)
elif cmd == "orphan":
    r, w = os.pipe()  # the waiter's report, to the main process
    go_r, go_w = os.pipe()  # the maker was reaped: the waiter may wait
    maker = os.fork()
    if maker == 0:
        os.close(go_w)
        a, b = socket.socketpair()
        if os.fork() == 0:
            b.close()
            os.read(go_r, 1)
            t0 = time.monotonic()
            ready, _, _ = select.select([a], [], [], 200)
            os.write(w, ("orphan pair (unix): %s after %.6f s\n" %
                         ("ready" if ready else "timed out",
                          time.monotonic() - t0)).encode())
            os._exit(0)
        if os.fork() == 0:
            a.close()
            time.sleep(float(sys.argv[2]) if len(sys.argv) > 2 else 100)
            b.sendall(b"hi\n")
            os._exit(0)
        os._exit(0)
    os.close(w)
    zombie = sys.argv[3:] == ["zombie"]
    while zombie and not ended(maker):
        os.sched_yield()
    if not zombie:
        os.waitpid(maker, 0)
    os.write(go_w, b"g")
    line = b""
    while True:
        c = os.read(r, 256)
        if not c:
            break
        line += c
    sys.stdout.write(line.decode())
    if zombie:
        os.waitpid(maker, 0)

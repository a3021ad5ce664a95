"""Local Redis topologies from redis-server processes: a 3-master cluster, and a master with a
replica watched by 3 sentinels. Loopback only, random ports, temp dirs, stopped by PID.

    python -m rigs.topology start cluster|sentinel DIR   # prints the REDIS_URL
    python -m rigs.topology stop DIR                     # stops every PID it started
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import redis
from redis.crc import key_slot

from bot.embedded_redis.supervisor import find_server_binary
from rigs.net import free_port
from rigs.stall_link import StallLink

SLOTS = 16384


def _client(port: int) -> redis.Redis:
    return redis.Redis(port=port, decode_responses=True, socket_timeout=2,
                       socket_connect_timeout=1)


def _wait(check, timeout: float = 20.0, what: str = "") -> None:  # type: ignore[no-untyped-def]
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            if check():
                return
        except (redis.RedisError, OSError):
            pass
        time.sleep(0.05)
    raise RuntimeError(f"timed out waiting for {what}")


class Topology:
    """Redis processes this run started, by PID (recorded in DIR/pids)."""

    def __init__(self, base: Path) -> None:
        self.base = base
        self.base.mkdir(parents=True, exist_ok=True)
        self.binary = str(find_server_binary())
        self.procs: dict[int, subprocess.Popen[bytes]] = {}  # port -> process
        self.url = ""
        self.master_port = 0
        self.replica_ports: list[int] = []
        self.sentinel_ports: list[int] = []
        self.links: list[StallLink] = []  # replicas' links to the first master, if asked

    def spawn(self, port: int, *extra: str, sentinel: bool = False) -> subprocess.Popen[bytes]:
        """Start one server (or sentinel) on a port in its own directory."""
        d = self.base / str(port)
        d.mkdir(exist_ok=True)
        conf = d / "redis.conf"
        conf.write_text(f"port {port}\nbind 127.0.0.1\ndir {d}\nsave \"\"\nappendonly no\n"
                        f"protected-mode no\nlogfile {d / 'log'}\n" + "".join(
                            f"{extra[i]} {extra[i + 1]}\n" for i in range(0, len(extra), 2)))
        args = [self.binary, str(conf)] + (["--sentinel"] if sentinel else [])
        proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                start_new_session=True)
        self.procs[port] = proc
        with open(self.base / "pids", "a") as f:
            f.write(f"{proc.pid}\n")
        _wait(lambda: _client(port).ping(), what=f"server on {port}")
        return proc

    def pid(self, port: int) -> int:
        """PID of the server on a port."""
        return self.procs[port].pid

    def master_of(self, key: str) -> int:
        """The port of the cluster master serving `key`'s slot now (asked of any server
        that answers)."""
        slot = key_slot(key.encode())
        for port in self.procs:
            try:
                ranges = _client(port).execute_command("CLUSTER", "SLOTS")
            except (redis.RedisError, OSError):
                continue
            for lo, hi, master, *_ in ranges:
                if lo <= slot <= hi:
                    return int(master[1])
        raise RuntimeError(f"no server knows who serves slot {slot}")

    def stop(self) -> None:
        """Stop every process this topology started (SIGCONT first: some may be paused)."""
        for link in self.links:
            link.cut()
        for proc in self.procs.values():
            for sig in (signal.SIGCONT, signal.SIGTERM):
                try:
                    os.kill(proc.pid, sig)
                except ProcessLookupError:
                    pass
        for proc in self.procs.values():
            try:
                proc.wait(5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        (self.base / "pids").unlink(missing_ok=True)


# As README's recommended Cluster settings: a master in FAIL state stops only its own slots.
# With the default (yes) every master answers CLUSTERDOWN from the moment one is marked
# failed until its replica has taken over, and the client waits out a topology refresh on
# each: every fixture's reports and cards stopped for 0.5-2.5 s in a master's pause.
COVERAGE = ("cluster-require-full-coverage", "no")
# As README's recommended Cluster (and Sentinel) settings: a replica that must sync in full
# (an old master back after a failover) is sent the data at once, not after Redis' default
# 5 s wait for more replicas to share the transfer; until it has synced, its new master's
# writes are HELD (not confirmed), and the fixture's cards wait for them.
SYNC_AT_ONCE = ("repl-diskless-sync-delay", "0")


def start_cluster(base: Path, masters: int = 3, replicas: int = 0) -> Topology:
    """A cluster of `masters` masters, each with `replicas` replicas in sync, all slots
    covered, state ok (t.replica_ports lists the replicas). When it cannot form, the servers
    it started are stopped before the error is raised (they run in sessions of their own: no
    caller could stop them, the caller never got the topology)."""
    t = Topology(base)
    try:
        return _form_cluster(t, masters, replicas)
    except BaseException:
        t.stop()
        raise


def _form_cluster(t: Topology, masters: int, replicas: int) -> Topology:
    ports = [free_port() for _ in range(masters)]
    extra = [free_port() for _ in range(masters * replicas)]
    for port in ports + extra:
        t.spawn(port, "cluster-enabled", "yes", "cluster-config-file", "nodes.conf",
                "cluster-node-timeout", "2000", *COVERAGE, *SYNC_AT_ONCE)
    step = SLOTS // masters
    for i, port in enumerate(ports):
        hi = SLOTS - 1 if i == masters - 1 else (i + 1) * step - 1
        _client(port).execute_command("CLUSTER", "ADDSLOTSRANGE", i * step, hi)
    for port in ports[1:] + extra:
        _client(port).execute_command("CLUSTER", "MEET", "127.0.0.1", ports[0])
    for port in ports + extra:
        _wait(lambda p=port: len(_client(p).execute_command("CLUSTER", "NODES")
                                 .strip().splitlines()) == len(ports) + len(extra),
              what="all nodes known")
    for i, port in enumerate(extra):
        master = ports[i % masters]
        node_id = _client(master).execute_command("CLUSTER", "MYID")
        _wait(lambda p=port, n=node_id: _client(p).execute_command(
            "CLUSTER", "REPLICATE", n), what="replica attached")
        t.replica_ports.append(port)
    for port in ports:
        _wait(lambda p=port: _online(p) == replicas, what="replicas in sync")
    for port in ports + extra:
        _wait(lambda p=port: "cluster_state:ok" in _client(p).execute_command(
            "CLUSTER", "INFO"), what="cluster_state:ok")
    t.url = "redis+cluster://" + ",".join(f"127.0.0.1:{p}" for p in ports)
    return t


def start_sentinel(base: Path, replicas: int = 1, sentinels: int = 3,
                   down_after_ms: int = 1000, name: str = "matchday",
                   stall_links: bool = False) -> Topology:
    """A master with replicas and sentinels (quorum 2) that fail over within seconds; with
    stall_links, each replica reaches the first master through a StallLink (t.links)."""
    t = Topology(base)
    t.master_port = free_port()
    t.spawn(t.master_port, *SYNC_AT_ONCE)
    for _ in range(replicas):
        port = free_port()
        upstream = t.master_port
        if stall_links:
            t.links.append(StallLink(t.master_port))
            upstream = t.links[-1].port
        t.spawn(port, "replicaof", f"127.0.0.1 {upstream}", "repl-ping-replica-period", "1",
                *SYNC_AT_ONCE)  # a replica promoted in a failover is a master too
        t.replica_ports.append(port)
    _wait(lambda: _online(t.master_port) == replicas, what="replicas in sync")
    for _ in range(sentinels):
        port = free_port()
        t.spawn(port, "sentinel", f"monitor {name} 127.0.0.1 {t.master_port} 2",
                "sentinel", f"down-after-milliseconds {name} {down_after_ms}",
                "sentinel", f"failover-timeout {name} 10000",
                "sentinel", f"parallel-syncs {name} 1", sentinel=True)
        t.sentinel_ports.append(port)
    for port in t.sentinel_ports:
        _wait(lambda p=port: _client(p).sentinel_master(name)["num-other-sentinels"]
              == sentinels - 1, what="sentinels see each other")
    t.url = ("redis+sentinel://" + ",".join(f"127.0.0.1:{p}" for p in t.sentinel_ports)
             + f"/{name}")
    return t


def _online(port: int) -> int:
    """How many replicas of a master are connected and in sync."""
    info = _client(port).info("replication")
    return sum(1 for k, v in info.items() if k.startswith("slave") and isinstance(v, dict)
               and v.get("state") == "online")


def main(argv: list[str]) -> int:
    """CLI: start a topology in the background and print its URL, or stop one by its PIDs."""
    if len(argv) == 3 and argv[0] == "start" and argv[1] in ("cluster", "sentinel"):
        base = Path(argv[2])
        t = start_cluster(base) if argv[1] == "cluster" else start_sentinel(base)
        (base / "url").write_text(t.url)
        print(t.url)
        return 0
    if len(argv) == 2 and argv[0] == "stop":
        pids = Path(argv[1]) / "pids"
        for line in (pids.read_text().split() if pids.exists() else []):
            for sig in (signal.SIGCONT, signal.SIGTERM):
                try:
                    os.kill(int(line), sig)
                except ProcessLookupError:
                    pass
        pids.unlink(missing_ok=True)
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

import fs from 'node:fs';

/**
 * The TCP connections a process group holds open to a port, as the kernel lists them (Linux /proc): every process
 * of the group (a ServiceProcess's wrapper leads it), their socket descriptors, and those of the established
 * connections in /proc/net/tcp{,6} whose remote port is `port`. What the peer sees, whatever the program says.
 */
export function connectionsTo(pgid: number, port: number): number {
  const inodes = new Set<string>();
  for (const pid of fs.readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    let stat: string;
    try {
      stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    } catch {
      continue; // gone since the listing
    }
    // pid (comm) state ppid pgrp …: comm may hold spaces, so read after its closing parenthesis.
    const pgrp = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]);
    if (pgrp !== pgid) continue;
    let fds: string[];
    try {
      fds = fs.readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      try {
        const m = /^socket:\[(\d+)\]$/.exec(fs.readlinkSync(`/proc/${pid}/fd/${fd}`));
        if (m) inodes.add(m[1]!);
      } catch {
        // closed since the listing
      }
    }
  }
  let n = 0;
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    if (!fs.existsSync(table)) continue;
    for (const row of fs.readFileSync(table, 'utf8').split('\n').slice(1)) {
      const cols = row.trim().split(/\s+/);
      if (cols.length < 10) continue;
      const remotePort = parseInt(cols[2]!.split(':')[1]!, 16);
      // st 01: ESTABLISHED
      if (cols[3] === '01' && remotePort === port && inodes.has(cols[9]!)) n++;
    }
  }
  return n;
}

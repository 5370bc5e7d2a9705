#!/bin/bash
# PID 1 of the test host's private PID+mount namespace (run by `unshare --pid --fork --mount --mount-proc`).
# It hides everything systemd could write to behind private tmpfs mounts, CHECKS that they are in
# place, then execs a real systemd. Without the private /tmp and /var/tmp, systemd-tmpfiles would
# empty the whole machine's /tmp, so any failed check aborts before systemd runs.
# $1: the lab dir (outside /tmp) prepared by tests/hostlab/lab.py:
#     units/ (the whole unit set), etc/ (passwd, group, shadow with the test user), cgroup (path).
set -euo pipefail
lab="$1"

mount --make-rprivate /

# Our own cgroup subtree, so systemd's init.scope/system.slice land under it, not the machine's root.
cg="$(cat "$lab/cgroup")"
for h in systemd unified; do
    if [ -d "/sys/fs/cgroup/$h/$cg" ]; then echo 0 > "/sys/fs/cgroup/$h/$cg/cgroup.procs"; fi
done

private_dirs=(/run /tmp /var/tmp /var/log /var/lib/systemd /var/cache /etc/systemd/system
              /lib/systemd/system /lib/systemd/system-generators /lib/systemd/system-shutdown)
for d in "${private_dirs[@]}"; do
    [ -d "$d" ] || { echo "hostlab: $d does not exist, refusing to boot" >&2; exit 70; }
    mount -t tmpfs -o mode=0755 hostlab "$d"
done
chmod 1777 /tmp /var/tmp

for d in "${private_dirs[@]}"; do
    fs="$(findmnt -n -r -o FSTYPE,SOURCE --mountpoint "$d" | tail -n 1)"
    if [ "$fs" != "tmpfs hostlab" ]; then
        echo "hostlab: $d is not our private tmpfs ($fs), refusing to boot" >&2
        exit 71
    fi
done

cp -a "$lab/units/." /lib/systemd/system/
mkdir -p /var/log/journal /run/sshd /etc/systemd/system/.specdec
chmod 0755 /run/sshd
# A private user database (copy of the machine's plus the test user): bind-mounted, machine untouched.
for f in passwd group shadow; do
    if [ -f "$lab/etc/$f" ]; then mount --bind "$lab/etc/$f" "/etc/$f"; fi
done
if [ -d "$lab/home" ]; then mount --bind "$lab/home" /home; fi
if [ -f "$lab/etc/sudoers" ] && [ -f /etc/sudoers ]; then mount --bind "$lab/etc/sudoers" /etc/sudoers; fi

export container=other
exec /lib/systemd/systemd --system --unit=basic.target --log-target=console --show-status=no

#!/bin/bash
# PID 1 of the test host's private PID+mount namespace (run by `unshare --pid --fork --mount --mount-proc`).
# It hides everything systemd could write to behind private tmpfs mounts, CHECKS that they are in
# place, then execs a real systemd. Without the private /tmp and /var/tmp, systemd-tmpfiles would
# empty the whole machine's /tmp, so any failed check aborts before systemd runs.
# $1: the lab dir (outside /tmp) prepared by tests/hostlab/lab.py:
#     units/ (the whole unit set), etc/ (passwd, group, shadow with the test user), cgroup (path),
#     visible (directories the lab's units need, one a line: the checkout, the venv, python's paths).
# Those of the `visible` directories that the private mounts below would hide (a clone under /tmp, a
# venv under /home, ...) are bind-mounted back READ-ONLY at the same path, on top of the private
# mounts, so nothing inside the lab can write to (or empty) the machine's copy.
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
hidden_dirs=("${private_dirs[@]}" /home)  # /home: the lab's own, bind-mounted below

# The visible directories the private mounts would hide: held open by a bind mount under $lab/stage
# now, while they can still be reached, and put back at their own path once the private mounts are up.
reveal=()
if [ -f "$lab/visible" ]; then
    mkdir -p "$lab/stage"
    while IFS= read -r p; do
        [ -n "$p" ] || continue
        under=""
        for d in "${hidden_dirs[@]}"; do
            if [ "$p" = "$d" ]; then
                echo "hostlab: the lab's units need $p, but $p itself is one of the lab's private" \
                     "directories (it must be a private tmpfs inside the lab); put the checkout and its venv" \
                     "in a directory below it or elsewhere. Refusing to boot" >&2
                exit 72
            fi
            case "$p" in "$d"/*) under="$d" ;; esac
        done
        [ -n "$under" ] || continue
        for r in "${reveal[@]}"; do case "$p" in "$r"/*) continue 2 ;; esac; done
        mkdir "$lab/stage/${#reveal[@]}"
        mount --bind "$p" "$lab/stage/${#reveal[@]}"
        reveal+=("$p")
    done < "$lab/visible"
fi

for d in "${private_dirs[@]}"; do
    [ -d "$d" ] || { echo "hostlab: $d does not exist, refusing to boot" >&2; exit 70; }
    mount -t tmpfs -o mode=0755 hostlab "$d"
done
chmod 1777 /tmp /var/tmp

check_private() {
    for d in "${private_dirs[@]}"; do
        fs="$(findmnt -n -r -o FSTYPE,SOURCE --mountpoint "$d" | tail -n 1)"
        if [ "$fs" != "tmpfs hostlab" ]; then
            echo "hostlab: $d is not our private tmpfs ($fs), refusing to boot" >&2
            exit 71
        fi
    done
}
check_private

cp -a "$lab/units/." /lib/systemd/system/
mkdir -p /var/log/journal /run/sshd /etc/systemd/system/.specdec
chmod 0755 /run/sshd
# A private user database (copy of the machine's plus the test user) and /etc/hosts (plus a name only the
# lab resolves, for the jump-host tests): bind-mounted, machine untouched.
for f in passwd group shadow hosts; do
    if [ -f "$lab/etc/$f" ]; then mount --bind "$lab/etc/$f" "/etc/$f"; fi
done
if [ -d "$lab/home" ]; then mount --bind "$lab/home" /home; fi
if [ -f "$lab/etc/sudoers" ] && [ -f /etc/sudoers ]; then mount --bind "$lab/etc/sudoers" /etc/sudoers; fi

# The hidden visible directories back at their own path, read-only (checked), then the stage let go.
for i in "${!reveal[@]}"; do
    p="${reveal[$i]}"
    mkdir -p "$p"
    mount --bind "$lab/stage/$i" "$p"
    mount -o remount,bind,ro "$p"
    opts="$(findmnt -n -r -o OPTIONS --mountpoint "$p" | tail -n 1)"
    case "$opts" in
        ro,* | ro) ;;
        *) echo "hostlab: could not make $p read-only inside the lab ($opts), refusing to boot" >&2; exit 73 ;;
    esac
    umount "$lab/stage/$i"
    echo "hostlab: $p is visible inside the lab (read-only)"
done
check_private  # still private tmpfs underneath the read-only directories

export container=other
exec /lib/systemd/systemd --system --unit=basic.target --log-target=console --show-status=no

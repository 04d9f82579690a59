#!/usr/bin/env python3
"""Builds an OCI image archive from the host's static busybox, for
`ctr images import` on a test node (tests/k8s/node.sh): no registry, no
download. One layer: /bin/busybox and a link per applet the tests use,
/etc/passwd and /etc/group, empty /dev /proc /sys /tmp. Its default command
sleeps, so the same image is the pods' sandbox ("pause") image.

usage: make_image.py BUSYBOX NAME OUT.tar
"""
import gzip
import hashlib
import io
import json
import os
import sys
import tarfile

APPLETS = ["sh", "sleep", "cat", "ls", "env", "test", "echo", "grep", "stat", "true", "head", "sed", "wc", "sort"]


def add(tf, name, data=None, mode=0o644, kind=tarfile.REGTYPE, link=""):
    ti = tarfile.TarInfo(name)
    ti.type = kind
    ti.mode = mode
    ti.mtime = 0
    ti.uid = ti.gid = 0
    ti.linkname = link
    if data is not None:
        ti.size = len(data)
        tf.addfile(ti, io.BytesIO(data))
    else:
        tf.addfile(ti)


def layer(busybox):
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tf:
        for d in ["bin", "dev", "etc", "proc", "sys", "tmp", "var"]:
            add(tf, d, mode=0o1777 if d == "tmp" else 0o755, kind=tarfile.DIRTYPE)
        with open(busybox, "rb") as f:
            add(tf, "bin/busybox", f.read(), mode=0o755)
        for a in APPLETS:
            add(tf, "bin/" + a, kind=tarfile.SYMTYPE, link="busybox", mode=0o777)
        add(tf, "etc/passwd", b"root:x:0:0:root:/:/bin/sh\nnobody:x:65534:65534:nobody:/:/bin/false\n")
        add(tf, "etc/group", b"root:x:0:\nnogroup:x:65534:\n")
    return raw.getvalue()


def blob(tf, data):
    digest = hashlib.sha256(data).hexdigest()
    add(tf, "blobs/sha256/" + digest, data)
    return "sha256:" + digest


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    busybox, name, out = sys.argv[1:]
    diff = layer(busybox)
    gz = gzip.compress(diff, mtime=0)
    config = json.dumps({
        "architecture": "amd64", "os": "linux",
        "config": {"Cmd": ["/bin/sleep", "2147483647"], "Env": ["PATH=/bin"], "WorkingDir": "/"},
        "rootfs": {"type": "layers", "diff_ids": ["sha256:" + hashlib.sha256(diff).hexdigest()]},
        "history": [{"created_by": "tests/k8s/make_image.py from " + busybox}],
    }, sort_keys=True).encode()
    tmp = out + ".tmp"
    with tarfile.open(tmp, "w", format=tarfile.PAX_FORMAT) as tf:
        for d in ["blobs", "blobs/sha256"]:
            add(tf, d, mode=0o755, kind=tarfile.DIRTYPE)
        cdig = blob(tf, config)
        ldig = blob(tf, gz)
        manifest = json.dumps({
            "schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
            "config": {"mediaType": "application/vnd.oci.image.config.v1+json", "digest": cdig, "size": len(config)},
            "layers": [{"mediaType": "application/vnd.oci.image.layer.v1.tar+gzip", "digest": ldig, "size": len(gz)}],
        }, sort_keys=True).encode()
        mdig = blob(tf, manifest)
        index = json.dumps({
            "schemaVersion": 2, "mediaType": "application/vnd.oci.image.index.v1+json",
            "manifests": [{"mediaType": "application/vnd.oci.image.manifest.v1+json", "digest": mdig,
                           "size": len(manifest), "platform": {"architecture": "amd64", "os": "linux"},
                           "annotations": {"io.containerd.image.name": name,
                                           "org.opencontainers.image.ref.name": name.rsplit(":", 1)[-1]}}],
        }, sort_keys=True).encode()
        add(tf, "oci-layout", b'{"imageLayoutVersion":"1.0.0"}')
        add(tf, "index.json", index)
    os.replace(tmp, out)


if __name__ == "__main__":
    main()

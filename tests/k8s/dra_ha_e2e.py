#!/usr/bin/env python3
"""What the DRA allocator's tests with several replicas share (test
infrastructure: dra_failover_e2e.py, dra_split_e2e.py): a replica's
/dra/status and log, our finalizer and annotation on the claims, who wrote
an allocation. Imported, not run.
"""
import json
import os
import ssl
import urllib.request

from dra_alloc_e2e import check_all, expect, pod

FIN = "resource.kubernetes.io/delete-protection"
ANN = "migsched.io/dra-allocator"


def mk(api, want, name, prof):
    """Pod NAME with a claim from the template t-PROF (dots dropped); want[name] = prof."""
    want[name] = prof
    return pod(api, name, tmpl="t-" + prof.replace(".", ""))


def status(url, ca):
    """The replica's /dra/status, or {} while it does not answer (not started, or gone)."""
    ctx = ssl.create_default_context(cafile=ca)
    try:
        with urllib.request.urlopen(url + "/dra/status", context=ctx, timeout=5) as r:
            return json.loads(r.read())
    except (OSError, ValueError):
        return {}


def logged(d, replica, msg, match=None):
    """The first line of replica's log (DIR/migschedd-REPLICA.log) whose msg
    is msg and for which match (a function of the line) holds, as a dict;
    or None."""
    try:
        lines = open(os.path.join(d, "migschedd-%s.log" % replica)).read().splitlines()
    except OSError:
        return None
    for ln in lines:
        try:
            o = json.loads(ln)
        except ValueError:
            continue
        if o.get("msg") == msg and (match is None or match(o)):
            return o
    return None


def ours_consistent(api):
    """Our finalizer and annotation only on a claim allocated (or going),
    each at most once; nobody holds a device or a memory slice twice."""
    _, cl = check_all(api, {})
    for name, c in cl.items():
        md = c["metadata"]
        fins = md.get("finalizers") or []
        expect(fins.count(FIN) <= 1, "claim %s: the finalizer %d times" % (name, fins.count(FIN)))
        if md.get("deletionTimestamp"):
            continue
        marked = FIN in fins or ANN in (md.get("annotations") or {})
        expect(not marked or c.get("status", {}).get("allocation"),
               "claim %s: our finalizer or annotation without an allocation (%s, %s)" % (
                   name, fins, (md.get("annotations") or {}).get(ANN)))
    return cl


def status_writer(c):
    """Who wrote status.allocation (managedFields), or None."""
    for m in c["metadata"].get("managedFields") or []:
        if m.get("subresource") == "status" and "f:allocation" in (m.get("fieldsV1", {}).get("f:status") or {}):
            return m.get("manager")
    return None

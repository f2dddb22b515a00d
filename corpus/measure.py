#!/usr/bin/env python3
"""Score every corpus pair with a toolcall binary and say which read right.

usage: measure.py BINARY CORPUS_DIR [--list-all]   (CORPUS_DIR: the folder holding <source>/manifest.json)

For each pair (manifest entry) it runs
  A  score --case request.json --response RESP --json      (the request body as the case)
  B  score --tools request.json --response RESP --json     (the request body as --tools)
  C  score --tools TOOLS --response RESP --json            (the request's own tools array, extracted
                                                            to a temporary file; or tools.json)
  D  score --case request.json --response RESP             (text mode: its 'N call(s)' line)
A pair reads RIGHT when A, B and C each give the expected exit code and verdict (0/pass; 1/fail
naming exactly the manifest's `undefined` when it lists some; 2 only when `expect_error`), and the
number of calls D reports equals len(called) (the binary prints no names on a pass, so the count
is what can be compared).
"""
import collections, concurrent.futures, json, os, re, subprocess, sys, tempfile

def request_tools(fmt, req):
    if fmt == 'bedrock':
        return (req.get('toolConfig') or {}).get('tools') or []
    if fmt == 'openai-chat':
        return req.get('tools') or req.get('functions') or []
    return req.get('tools') or []

def run(binary, args):
    p = subprocess.run([binary, 'score', *args], capture_output=True, text=True, timeout=60)
    out = p.stdout.strip()
    try:
        j = json.loads(out) if '--json' in args else None
    except Exception:
        j = None
    return p.returncode, j, out, p.stderr.strip()

def oneline(s, n=300):
    s = re.sub(r'\s+', ' ', s or '').strip()
    return s[:n]

def describe(rc, j, out, err):
    if rc == 2:
        return 'exit 2: ' + oneline(err or out)
    if j and j.get('findings'):
        return 'exit %d: ' % rc + ' | '.join(oneline('%s `%s` %s' % (f.get('kind'), f.get('name'), f.get('detail') or f.get('cause') or f.get('message') or ''), 200) for f in j['findings'][:3])
    return 'exit %d: %s' % (rc, oneline(out or err))

def check(binary, root, src, e, tmpdir, secondary=False):
    d = os.path.join(root, src, e['dir'])
    resp = os.path.join(d, e['response_file'])
    undefined = e.get('undefined') or []
    want = 2 if e.get('expect_error') else (1 if undefined else 0)
    runs = []
    if e.get('request_file'):
        reqf = os.path.join(d, e['request_file'])
        req = json.load(open(reqf))
        tf = os.path.join(tmpdir, '%s__%s.tools.json' % (src, e['id']))
        json.dump(request_tools(e['format'], req), open(tf, 'w'))
        runs = [('case', ['--case', reqf]), ('tools', ['--tools', tf])]
        if secondary:
            runs = [('tools=request', ['--tools', reqf])]
    else:
        runs = [('tools', ['--tools', os.path.join(d, e['tools_file'])])]
    reasons = []
    for label, a in runs:
        rc, j, out, err = run(binary, a + ['--response', resp, '--json'])
        ok = rc == want
        if ok and want == 1:
            names = sorted(f.get('name') for f in (j or {}).get('findings', []))
            ok = names == sorted(undefined)
        if ok and want == 0:
            ok = bool(j) and j.get('verdict') == 'pass'
        if not ok:
            reasons.append('[%s] %s' % (label, describe(rc, j, out, err)))
    if not reasons and want == 0 and not secondary:
        first = runs[0][1]
        rc, _, out, err = run(binary, first + ['--response', resp])
        m = re.search(r'(\d+) call\(s\)', out)
        n = int(m.group(1)) if m else (0 if re.search(r'no (tool )?calls?', out) else None)
        if n is not None and n != len(e['called']):
            reasons.append('[count] read %s call(s), the manifest has %d %s: %s' % (n, len(e['called']), e['called'], oneline(out, 160)))
        elif n is None and e['called']:
            reasons.append('[count] no call count in: %s' % oneline(out, 160))
    return reasons

def main():
    binary = sys.argv[1]
    root = next((a for a in sys.argv[2:] if not a.startswith('--')), os.path.dirname(os.path.abspath(__file__)))
    list_all = '--list-all' in sys.argv
    jobs = []
    for src in sorted(os.listdir(root)):
        mf = os.path.join(root, src, 'manifest.json')
        if os.path.isfile(mf):
            for e in json.load(open(mf)):
                jobs.append((src, e))
    per = collections.defaultdict(lambda: [0, 0])
    wrong = []
    with tempfile.TemporaryDirectory() as tmp, concurrent.futures.ThreadPoolExecutor(8) as ex:
        futs = {ex.submit(check, binary, root, src, e, tmp): (src, e) for src, e in jobs}
        for fu in futs:
            src, e = futs[fu]
            try:
                reasons = fu.result()
            except Exception as x:
                reasons = ['measure.py: %r' % x]
            key = e['format'] + (' stream' if e['stream'] else '')
            per[key][1] += 1
            per[key][0] += not reasons
            if reasons:
                wrong.append((src + '/' + e['dir'], reasons))
    print('| format | right | total |')
    print('|---|---:|---:|')
    tr = tt = 0
    for k in sorted(per):
        r, t = per[k]; tr += r; tt += t
        print('| %s | %d | %d |' % (k, r, t))
    print('| **all** | **%d** | **%d** |' % (tr, tt))
    # secondary: the request body itself handed to --tools (not part of RIGHT)
    sec = collections.defaultdict(lambda: [0, 0]); secw = []
    with tempfile.TemporaryDirectory() as tmp, concurrent.futures.ThreadPoolExecutor(8) as ex:
        futs = {ex.submit(check, binary, root, src, e, tmp, True): (src, e) for src, e in jobs if e.get('request_file')}
        for fu in futs:
            src, e = futs[fu]
            rs = fu.result()
            sec[e['format']][1] += 1; sec[e['format']][0] += not rs
            if rs:
                secw.append((src + '/' + e['dir'], rs))
    print()
    print('Secondary, `--tools request.json` (the whole request body as --tools): ' + ', '.join('%s %d/%d' % (k, v[0], v[1]) for k, v in sorted(sec.items())))
    print()
    print('WRONG (%d):' % len(wrong))
    for p, rs in sorted(wrong):
        print('%s\t%s' % (p, rs[0] if not list_all else ' || '.join(rs)))
    if list_all:
        print()
        print('WRONG with --tools request.json (%d):' % len(secw))
        for p, rs in sorted(secw):
            print('%s\t%s' % (p, rs[0]))

if __name__ == '__main__':
    main()

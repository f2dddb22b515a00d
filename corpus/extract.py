#!/usr/bin/env python3
"""Extract request/response pairs of provider traffic from recorded cassettes of public
SDK/framework test suites (fetched git snapshots), into corpus/<source>/pairs/<id>/.

Independent of toolcall-score: the calls of each response (`called`, `args`, `server_calls`) are
read here from each provider's documented wire shape.

usage: extract.py OUT_DIR                    (reads the snapshots under /work/.mirror)
       extract.py OUT_DIR --from CASSETTES    (reads a plain directory of cassette files)

--from CASSETTES reads CASSETTES/<owner>/<name>/<path in the repository> for each source that has a
folder there, with CASSETTES/sources.json saying, per "owner/name", the commit each file was read at
({"files": {path: commit}, "licence": {"file": "LICENSE", "note": "..."}}); the licence text is
CASSETTES/<owner>/<name>/<licence file>. Each source folder then also gets a README.md naming the
repository, the files, their commits and the licence. Cassette text may have lost its carriage
returns (a text copy of an httprr file): the httprr reader then goes by Content-Length and chunk
sizes instead of the record's byte counts.
"""
import base64, collections, gzip, hashlib, json, os, re, shutil, struct, subprocess, sys, zlib
import yaml

MIRROR = '/work/.mirror'
MAX_BODY = 200_000

SOURCES = [
    # (folder, owner/name, licence, licence file, path prefixes, loader)
    ('crewai', 'crewAIInc/crewAI', 'MIT', 'LICENSE', ['lib/crewai/tests/cassettes', 'lib/crewai-tools/tests'], 'vcr'),
    ('ruby_llm', 'crmne/ruby_llm', 'MIT', 'LICENSE', ['spec/fixtures/vcr_cassettes'], 'vcr'),
    ('langchain-aws', 'langchain-ai/langchain-aws', 'MIT', 'LICENSE', ['libs/aws/tests/cassettes'], 'vcr'),
    ('llm-anthropic', 'simonw/llm-anthropic', 'Apache-2.0', 'LICENSE', ['tests/cassettes'], 'vcr'),
    ('llm-gemini', 'simonw/llm-gemini', 'Apache-2.0', 'LICENSE', ['tests/cassettes'], 'vcr'),
    ('llm', 'simonw/llm', 'Apache-2.0', 'LICENSE', ['tests/cassettes'], 'vcr'),
    ('langchaingo', 'tmc/langchaingo', 'MIT', 'LICENSE', ['llms', 'agents', 'chains'], 'httprr'),
]

# ---------------------------------------------------------------- reading cassettes

class Loader(yaml.CSafeLoader):
    pass
Loader.add_constructor('!binary', lambda l, n: base64.b64decode(l.construct_scalar(n)))

def git(gitdir, *args):
    return subprocess.run(['git', '--git-dir', gitdir, *args], capture_output=True, check=True).stdout

def body_bytes(x):
    if x is None:
        return b''
    if isinstance(x, bytes):
        return x
    if isinstance(x, dict):
        if 'base64_string' in x:
            return base64.b64decode(x['base64_string'])
        if 'string' in x:
            return body_bytes(x['string'])
        return json.dumps(x).encode()
    if isinstance(x, list):
        return json.dumps(x).encode()
    return str(x).encode('utf-8')

def header(h, name):
    if not h:
        return None
    for k, v in h.items():
        if k.lower() == name:
            return v[0] if isinstance(v, list) else v
    return None

def decompress(b, h):
    enc = (header(h, 'content-encoding') or '').lower()
    if b[:2] == b'\x1f\x8b':
        try:
            return gzip.decompress(b)
        except Exception:
            return None
    if enc == 'br':
        try:
            import brotli
            return brotli.decompress(b)
        except Exception:
            return None
    if enc == 'deflate':
        try:
            return zlib.decompress(b)
        except Exception:
            return None
    return b

def vcr_interactions(raw, fname):
    if fname.endswith('.gz'):
        raw = gzip.decompress(raw)
    d = json.loads(raw) if fname.endswith('.json') else yaml.load(raw, Loader=Loader)
    out = []
    if not isinstance(d, dict):
        return out
    if 'interactions' in d or 'http_interactions' in d:       # vcrpy / Ruby VCR
        pairs = [(it['request'], it['response']) for it in d.get('interactions') or d.get('http_interactions') or []]
    elif 'requests' in d and 'responses' in d:                  # langchain's compressed cassettes
        pairs = list(zip(d['requests'], d['responses']))
    else:
        return out
    for rq, rs in pairs:
        st = rs.get('status')
        code = st.get('code') if isinstance(st, dict) else st
        out.append(dict(uri=str(rq.get('uri') or rq.get('url')),
                        req=decompress(body_bytes(rq.get('body')), rq.get('headers')),
                        status=code, headers=rs.get('headers'),
                        resp=decompress(body_bytes(rs.get('body')), rs.get('headers'))))
    return out

def dechunk(b):
    out = b''
    while b:
        line, _, b = b.partition(b'\r\n')
        n = int(line.split(b';')[0].strip() or b'0', 16)
        if n == 0:
            break
        out += b[:n]
        b = b[n + 2:]
    return out

def _http_message(data):
    """(start line, headers, body, rest) of one HTTP message at the start of `data`, reading lines
    ended by LF or CRLF and the body by Content-Length or chunked framing; `rest` is what follows."""
    crlf, lf = data.find(b'\r\n\r\n'), data.find(b'\n\n')
    head, _, rest = data.partition(b'\r\n\r\n' if crlf >= 0 and (lf < 0 or crlf < lf) else b'\n\n')
    lines = head.decode('latin-1').replace('\r\n', '\n').split('\n')
    h = {}
    for l in lines[1:]:
        k, _, v = l.partition(':')
        h.setdefault(k.strip(), []).append(v.strip())
    if (header(h, 'transfer-encoding') or '').lower() == 'chunked':
        body = b''
        while True:
            line, _, rest = rest.partition(b'\n')
            n = int(line.strip().split(b';')[0] or b'0', 16)
            if n == 0:
                rest = rest[2:] if rest.startswith(b'\r\n') else rest[1:] if rest.startswith(b'\n') else rest
                break
            body, rest = body + rest[:n], rest[n:]
            rest = rest[2:] if rest.startswith(b'\r\n') else rest[1:]
        return lines[0], h, body, rest
    n = header(h, 'content-length')
    if n is not None:
        return lines[0], h, rest[:int(n)], rest[int(n):]
    m = re.search(rb'(?m)^\d+ \d+\r?\n', rest)             # no length: up to the next record
    return lines[0], h, rest[:m.start()] if m else rest, rest[m.start():] if m else b''

def httprr_interactions_lenient(raw):
    """httprr records whose byte counts no longer hold (carriage returns lost in a text copy)."""
    data = raw[len(b'httprr trace v1\n'):]
    out = []
    while data.strip():
        _, _, data = data.partition(b'\n')                   # the record's "N1 N2" line
        start, _, rbody, data = _http_message(data)
        uri = start.split(' ')[1]
        status, h, sbody, data = _http_message(data)
        out.append(dict(uri=uri, req=rbody, status=int(status.split(' ')[1]), headers=h, resp=decompress(sbody, h)))
    return out

def httprr_interactions(raw, fname):
    assert raw.startswith(b'httprr trace v1\n')
    if b'\r\n' not in raw:
        return httprr_interactions_lenient(raw)
    data = raw[len(b'httprr trace v1\n'):]
    out = []
    while data:
        line, _, data = data.partition(b'\n')
        n1, n2 = map(int, line.strip().split())
        rq, rs, data = data[:n1], data[n1:n1 + n2], data[n1 + n2:]
        rhead, _, rbody = rq.partition(b'\r\n\r\n')
        uri = rhead.split(b'\r\n')[0].split(b' ')[1].decode()
        shead, _, sbody = rs.partition(b'\r\n\r\n')
        lines = shead.decode('latin-1').split('\r\n')
        code = int(lines[0].split(' ')[1])
        h = {}
        for l in lines[1:]:
            k, _, v = l.partition(':')
            h.setdefault(k.strip(), []).append(v.strip())
        if (header(h, 'transfer-encoding') or '').lower() == 'chunked':
            sbody = dechunk(sbody)
        out.append(dict(uri=uri, req=rbody, status=code, headers=h, resp=decompress(sbody, h)))
    return out

# ---------------------------------------------------------------- classifying

def classify(uri):
    u = uri.split('?')[0]
    if re.search(r'/v1/messages$', u) and 'batches' not in u:
        return 'anthropic'
    if re.search(r'/chat/completions$', u):
        return 'openai-chat'
    if re.search(r'/responses$', u):
        return 'openai-responses'
    if re.search(r':(stream)?[gG]enerateContent$', u):
        return 'gemini'
    if re.search(r'/converse(-stream)?$', u):
        return 'bedrock'
    if re.search(r'/api/chat$', u):
        return 'ollama'
    return None

def request_tools(fmt, req):
    if fmt == 'bedrock':
        return (req.get('toolConfig') or {}).get('tools')
    if fmt == 'openai-chat':
        return req.get('tools') or req.get('functions')
    return req.get('tools')

def split_sse(text):
    """[(event, data-string)] of a server-sent-events body."""
    events, ev, data = [], None, []
    for line in text.replace('\r\n', '\n').split('\n'):
        if line == '':
            if data:
                events.append((ev, '\n'.join(data)))
            ev, data = None, []
        elif line.startswith(':'):
            continue
        elif line.startswith('event:'):
            ev = line[6:].strip()
        elif line.startswith('data:'):
            data.append(line[5:].lstrip(' ') if line[5:6] == ' ' else line[5:])
    if data:
        events.append((ev, '\n'.join(data)))
    return events

def parse_args(s, notes):
    if isinstance(s, dict):
        return s
    if s is None or s == '':
        notes.append('empty arguments string read as {}')
        return {}
    try:
        return json.loads(s)
    except Exception:
        notes.append('arguments not JSON: kept as the raw string')
        return s

def eventstream_events(b):
    """AWS binary event stream -> [(event-type, payload json)]"""
    out = []
    while len(b) >= 16:
        total, hlen = struct.unpack('>II', b[:8])
        hdr = b[12:12 + hlen]
        payload = b[12 + hlen:total - 4]
        h, i = {}, 0
        while i < len(hdr):
            nl = hdr[i]; name = hdr[i + 1:i + 1 + nl].decode(); i += 1 + nl
            t = hdr[i]; i += 1
            if t == 7:
                vl = struct.unpack('>H', hdr[i:i + 2])[0]; h[name] = hdr[i + 2:i + 2 + vl].decode(); i += 2 + vl
            else:
                raise ValueError('header type %d' % t)
        out.append((h.get(':event-type') or h.get(':exception-type'), h.get(':message-type'), json.loads(payload or b'{}')))
        b = b[total:]
    return out

# ---------------------------------------------------------------- reading calls, per format

CLIENT_RESPONSES_ITEMS = {'function_call': None, 'custom_tool_call': None, 'computer_call': 'computer',
                          'local_shell_call': 'local_shell', 'shell_call': 'shell', 'apply_patch_call': 'apply_patch'}
SERVER_RESPONSES_ITEMS = {'web_search_call': 'web_search', 'file_search_call': 'file_search',
                          'code_interpreter_call': 'code_interpreter', 'image_generation_call': 'image_generation',
                          'mcp_call': 'mcp', 'mcp_list_tools': 'mcp_list_tools', 'tool_search_call': 'tool_search',
                          'web_fetch_call': 'web_fetch'}

def calls_anthropic(body, stream, notes):
    called, args, server, err = [], [], [], False
    if not stream:
        if body.get('type') == 'error':
            return called, args, server, True
        for b in body.get('content') or []:
            if b.get('type') == 'tool_use':
                called.append(b['name']); args.append(b.get('input'))
            elif b.get('type') in ('server_tool_use', 'mcp_tool_use'):
                server.append(b['name'])
        return called, args, server, err
    blocks = {}
    for ev, data in body:
        try:
            d = json.loads(data)
        except Exception:
            continue
        t = d.get('type')
        if t == 'error' or ev == 'error':
            err = True
        elif t == 'content_block_start':
            cb = d['content_block']
            blocks[d['index']] = [cb.get('type'), cb.get('name'), '', cb.get('input')]
        elif t == 'content_block_delta' and d['delta'].get('type') == 'input_json_delta':
            blocks[d['index']][2] += d['delta'].get('partial_json', '')
    for i in sorted(blocks):
        typ, name, js, inp = blocks[i]
        if typ == 'tool_use':
            called.append(name)
            args.append(json.loads(js) if js else (inp if inp is not None else {}))
        elif typ in ('server_tool_use', 'mcp_tool_use'):
            server.append(name)
    return called, args, server, err

def calls_chat(body, stream, notes):
    called, args, err = [], [], False
    if not stream:
        if 'error' in body and not body.get('choices'):
            return [], [], [], True
        ch = body.get('choices') or []
        if len(ch) > 1:
            notes.append('%d choices: calls of every choice, in choice order' % len(ch))
        for c in ch:
            m = c.get('message') or {}
            for tc in m.get('tool_calls') or []:
                f = tc.get('function') or {}
                called.append(f.get('name')); args.append(parse_args(f.get('arguments'), notes))
            if m.get('function_call'):
                notes.append('legacy function_call')
                called.append(m['function_call'].get('name')); args.append(parse_args(m['function_call'].get('arguments'), notes))
        return called, args, [], err
    acc = collections.OrderedDict()
    for ev, data in body:
        if data.strip() == '[DONE]':
            continue
        try:
            d = json.loads(data)
        except Exception:
            notes.append('a stream line is not JSON'); continue
        if 'error' in d and not d.get('choices'):
            err = True
        for c in d.get('choices') or []:
            delta = c.get('delta') or {}
            for tc in delta.get('tool_calls') or []:
                key = (c.get('index', 0), tc.get('index', 0))
                a = acc.setdefault(key, ['', ''])
                f = tc.get('function') or {}
                if f.get('name'):
                    a[0] += f['name'] if not a[0] else ('' if a[0] == f['name'] else f['name'])
                if f.get('arguments'):
                    a[1] += f['arguments']
            if delta.get('function_call'):
                a = acc.setdefault((c.get('index', 0), 'fc'), ['', ''])
                a[0] += delta['function_call'].get('name') or ''
                a[1] += delta['function_call'].get('arguments') or ''
    for k in sorted(acc, key=lambda k: (k[0], -1 if k[1] == 'fc' else k[1])):
        called.append(acc[k][0]); args.append(parse_args(acc[k][1], notes))
    return called, args, [], err

def responses_items(items, notes):
    called, args, server = [], [], []
    for it in items or []:
        t = it.get('type')
        if t in CLIENT_RESPONSES_ITEMS:
            name = it.get('name') or CLIENT_RESPONSES_ITEMS[t]
            called.append(name)
            if t == 'function_call':
                args.append(parse_args(it.get('arguments'), notes))
            elif t == 'custom_tool_call':
                args.append(it.get('input')); notes.append('custom_tool_call: args is the raw input string')
            else:
                args.append(it.get('action') or it.get('operation'))
        elif t in SERVER_RESPONSES_ITEMS:
            server.append(it.get('name') if t == 'mcp_call' and it.get('name') else SERVER_RESPONSES_ITEMS[t])
        elif t == 'mcp_approval_request':
            server.append(it.get('name')); notes.append('mcp_approval_request item')
    return called, args, server

def calls_responses(body, stream, notes):
    if not stream:
        if body.get('error') and not body.get('output'):
            return [], [], [], True
        c, a, s = responses_items(body.get('output'), notes)
        return c, a, s, bool(body.get('status') == 'failed')
    final, done, err = None, [], False
    for ev, data in body:
        try:
            d = json.loads(data)
        except Exception:
            continue
        t = d.get('type') or ev
        if t in ('response.completed', 'response.incomplete', 'response.failed'):
            final = d.get('response')
            if t == 'response.failed':
                err = True
        elif t == 'response.output_item.done':
            done.append(d.get('item'))
        elif t == 'error':
            err = True
    items = final.get('output') if final and final.get('output') else done
    c, a, s = responses_items(items, notes)
    return c, a, s, err

def calls_gemini(body, stream, notes):
    called, args, server, err = [], [], [], False
    chunks = body if isinstance(body, list) else [body]
    if stream and isinstance(body, list) and body and isinstance(body[0], tuple):
        chunks = [json.loads(d) for _, d in body if d.strip()]
    for ch in chunks:
        if 'error' in ch and not ch.get('candidates'):
            err = True
        cands = ch.get('candidates') or []
        for i, c in enumerate(cands[:1]):
            for p in (c.get('content') or {}).get('parts') or []:
                if 'functionCall' in p:
                    fc = p['functionCall']
                    called.append(fc.get('name')); args.append(fc.get('args', {}))
                if 'executableCode' in p:
                    server.append('code_execution')
    return called, args, server, err

def calls_bedrock(body, stream, notes):
    called, args, server = [], [], []
    if not stream:
        for b in ((body.get('output') or {}).get('message') or {}).get('content') or []:
            if 'toolUse' in b and b['toolUse'].get('type') == 'server_tool_use':
                server.append(b['toolUse']['name'])
            elif 'toolUse' in b:
                called.append(b['toolUse']['name']); args.append(b['toolUse'].get('input'))
        return called, args, server, False
    blocks, err = {}, False
    for ch in body:
        (k, v), = ch.items()
        if k == 'contentBlockStart' and 'toolUse' in (v.get('start') or {}):
            tu = v['start']['toolUse']
            blocks[v['contentBlockIndex']] = [tu['name'], '', tu.get('type') == 'server_tool_use']
        elif k == 'contentBlockDelta' and 'toolUse' in (v.get('delta') or {}):
            blocks[v['contentBlockIndex']][1] += v['delta']['toolUse'].get('input', '')
        elif k.endswith('Exception'):
            err = True
    for i in sorted(blocks):
        if blocks[i][2]:
            server.append(blocks[i][0])
        else:
            called.append(blocks[i][0]); args.append(parse_args(blocks[i][1], notes))
    return called, args, server, err

def calls_ollama(body, stream, notes):
    called, args, err = [], [], False
    for ch in (body if stream else [body]):
        if 'error' in ch:
            err = True
        for tc in (ch.get('message') or {}).get('tool_calls') or []:
            f = tc.get('function') or {}
            called.append(f.get('name')); args.append(f.get('arguments'))
    return called, args, [], err

READERS = {'anthropic': calls_anthropic, 'openai-chat': calls_chat, 'openai-responses': calls_responses,
           'gemini': calls_gemini, 'bedrock': calls_bedrock, 'ollama': calls_ollama}

# ---------------------------------------------------------------- main

def slug(s):
    s = re.sub(r'\.(ya?ml|json|httprr)(\.gz)?$', '', os.path.basename(s))
    s = re.sub(r'[^A-Za-z0-9_.-]+', '-', s).strip('-')
    if len(s) > 90:
        s = s[:70] + '-' + hashlib.sha1(s.encode()).hexdigest()[:8]
    return s

class Snapshot:
    """A source read from its fetched git snapshot under MIRROR: one commit for every file."""
    def __init__(self, repo, prefixes):
        self.gitdir = os.path.join(MIRROR, repo.replace('/', '+'), 'repo')
        self.head = git(self.gitdir, 'rev-parse', 'HEAD').decode().strip()
        self.files = [f for f in git(self.gitdir, 'ls-tree', '-r', '--name-only', 'HEAD', *prefixes).decode().split('\n') if f]
        self.note = None

    def commit(self, f):
        return self.head

    def read(self, f):
        return git(self.gitdir, 'show', 'HEAD:' + f)


class Directory:
    """A source read from a plain directory of cassette files, CASSETTES/<owner>/<name>/<path>, each
    file at the commit CASSETTES/sources.json gives for it (see the module doc)."""
    def __init__(self, root, repo, prefixes, meta):
        self.base = os.path.join(root, repo)
        self.commits = meta['files']
        self.files = sorted(f for f in self.commits if any(f.startswith(p + '/') for p in prefixes))
        self.licence = meta.get('licence') or {}
        self.note = self.licence.get('note')
        self.head = None

    def commit(self, f):
        return self.commits[f]

    def read(self, f):
        with open(os.path.join(self.base, f), 'rb') as fh:
            return fh.read()


def write_readme(sdir, folder, repo, lic, src, manifest, dropped):
    by_path = collections.OrderedDict()
    for e in manifest:
        by_path.setdefault(e['path'], []).append(e)
    formats = collections.Counter(e['format'] + (' stream' if e['stream'] else '') for e in manifest)
    lines = ['# %s: recorded provider traffic from %s' % (folder, repo), '',
             'Request/response pairs taken from the VCR cassettes of https://github.com/%s, each file as the' % repo,
             'search index\'s `read_file` stored it, at the commit named beside it. Licence: %s (`LICENSE`).' % lic, '']
    if src.note:
        lines += [src.note, '']
    lines += ['Pairs by format: ' + ', '.join('%s %d' % kv for kv in sorted(formats.items())) + '.', '',
              '| file | commit | pairs |', '|---|---|---:|']
    for path, es in by_path.items():
        lines.append('| `%s` | %s | %d |' % (path, src.commit(path), len(es)))
    if dropped:
        lines += ['', 'Interactions left out: ' + ', '.join('%s %d' % kv for kv in sorted(dropped.items())) + '.']
    lines += ['', 'Rebuilt by `corpus/extract.py corpus --from CASSETTES`; `manifest.json` holds each pair\'s',
              '`called` and `args`, read by extract.py\'s own reader of the format (not by toolcall-score).', '']
    with open(os.path.join(sdir, 'README.md'), 'w') as fh:
        fh.write('\n'.join(lines))


def main(out, from_dir=None):
    totals = collections.Counter()
    meta = None
    if from_dir:
        with open(os.path.join(from_dir, 'sources.json')) as fh:
            meta = json.load(fh)
    for folder, repo, lic, licfile, prefixes, kind in SOURCES:
        if meta is not None:
            if repo not in meta:
                continue
            src = Directory(from_dir, repo, prefixes, meta[repo])
        else:
            src = Snapshot(repo, prefixes)
        files = src.files
        # simonw/llm's test_tools_streaming_variant_* cassettes are hand-edited variants (ids such as
        # "gen-...ArgsNullVariantD00", model "muse-spark-1.1"), not recorded traffic: left out
        files = [f for f in files if 'tools_streaming_variant' not in f]
        files = [f for f in files if (re.search(r'\.(ya?ml|json)(\.gz)?$', f) and 'cassette' in f) or f.endswith('.httprr')]
        sdir = os.path.join(out, folder)
        if os.path.exists(sdir):
            shutil.rmtree(sdir)
        os.makedirs(os.path.join(sdir, 'pairs'))
        manifest, seen, dropped = [], set(), collections.Counter()
        for f in sorted(files):
            try:
                raw = src.read(f)
            except (subprocess.CalledProcessError, OSError):
                dropped['cassette absent from the snapshot (>= 4 MiB)'] += 1
                continue
            try:
                its = httprr_interactions(raw, f) if kind == 'httprr' else vcr_interactions(raw, f)
            except Exception as e:
                dropped['cassette unreadable'] += 1
                continue
            for n, it in enumerate(its):
                fmt = classify(it['uri'])
                if not fmt:
                    continue
                notes = []
                if it['resp'] is None or it['req'] is None:
                    dropped['body undecodable'] += 1; continue
                if it['status'] not in (200, '200', None):
                    dropped['non-200 status'] += 1; continue
                if len(it['resp']) > MAX_BODY or len(it['req']) > MAX_BODY:
                    dropped['over 200 KB'] += 1; continue
                try:
                    req = json.loads(it['req'])
                except Exception:
                    dropped['request not JSON'] += 1; continue
                tools = request_tools(fmt, req)
                if not tools and fmt != 'ollama':
                    dropped['request without tools'] += 1; continue
                if not tools:
                    notes.append('the request carried no tools (native Ollama traffic is scarce; kept for reading)')
                text = it['resp'].decode('utf-8', 'replace')
                stripped = text.lstrip()
                ctype = (header(it['headers'], 'content-type') or '').lower()
                if 'amazon.eventstream' in ctype or fmt == 'bedrock' and it['uri'].split('?')[0].endswith('-stream'):
                    try:
                        evs = eventstream_events(it['resp'])
                    except Exception:
                        dropped['eventstream undecodable'] += 1; continue
                    chunks = [{e: p} for e, mt, p in evs]
                    stream, rfile, content = True, 'response.chunks.txt', ''.join(json.dumps(c) + '\n' for c in chunks)
                    parsed = chunks
                    notes.append('ConverseStream: decoded from the binary AWS event stream, one {eventType: payload} per line')
                elif stripped.startswith(('data:', 'event:', ':')) or 'text/event-stream' in ctype:
                    stream, rfile, content = True, 'response.sse', text
                    parsed = split_sse(text)
                    if fmt == 'gemini':
                        parsed = [json.loads(d) for _, d in parsed if d.strip()]
                elif fmt == 'ollama' and ('ndjson' in ctype or len([l for l in text.split('\n') if l.strip()]) > 1):
                    stream, rfile, content = True, 'response.ndjson', text
                    parsed = [json.loads(l) for l in text.split('\n') if l.strip()]
                else:
                    try:
                        parsed = json.loads(text)
                    except Exception:
                        dropped['response not JSON'] += 1; continue
                    stream = isinstance(parsed, list)
                    rfile, content = 'response.json', text
                    if stream:
                        notes.append('stream recorded as one JSON array of chunks')
                h = hashlib.sha1(it['req'] + b'\0' + it['resp']).hexdigest()
                if h in seen:
                    dropped['duplicate'] += 1; continue
                seen.add(h)
                try:
                    called, args, server, err = READERS[fmt](parsed, stream, notes)
                except Exception as e:
                    dropped['calls unreadable by extract.py: %s' % type(e).__name__] += 1; continue
                host = re.sub(r'^https?://', '', it['uri']).split('/')[0]
                if fmt == 'openai-chat' and 'api.openai.com' not in host:
                    notes.append('OpenAI-compatible endpoint at %s' % host)
                pid = slug(f) + '__%d' % n
                if os.path.exists(os.path.join(sdir, 'pairs', pid)):
                    pid = slug(os.path.dirname(f)) + '--' + pid
                pdir = os.path.join('pairs', pid)
                os.makedirs(os.path.join(sdir, pdir))
                with open(os.path.join(sdir, pdir, 'request.json'), 'wb') as fh:
                    fh.write(it['req'])
                with open(os.path.join(sdir, pdir, rfile), 'w') as fh:
                    fh.write(content)
                manifest.append(dict(id=pid, dir=pdir, repo=repo, commit=src.commit(f), path=f, interaction=n,
                                     uri=it['uri'].split('?')[0], licence=lic, format=fmt, stream=stream,
                                     request_file='request.json', tools_file=None, tools_reconstructed=False,
                                     response_file=rfile, called=called, server_calls=server, args=args,
                                     undefined=[], expect_error=err, notes='; '.join(dict.fromkeys(notes))))
                totals[(folder, fmt)] += 1
        with open(os.path.join(sdir, 'manifest.json'), 'w') as fh:
            json.dump(manifest, fh, indent=1, ensure_ascii=False)
            fh.write('\n')
        with open(os.path.join(sdir, 'LICENSE'), 'wb') as fh:
            if meta is not None:
                with open(os.path.join(src.base, src.licence.get('file', licfile)), 'rb') as lf:
                    fh.write(lf.read())
            else:
                fh.write(git(src.gitdir, 'show', 'HEAD:' + licfile))
        if meta is not None:
            write_readme(sdir, folder, repo, lic, src, manifest, dropped)
        with open(os.path.join(sdir, 'dropped.json'), 'w') as fh:
            json.dump(dict(dropped), fh, indent=1); fh.write('\n')
        print(folder, (src.head or 'per-file commits')[:16], len(manifest), dict(dropped), file=sys.stderr)
    for k, v in sorted(totals.items()):
        print(k[0], k[1], v)

if __name__ == '__main__':
    args = sys.argv[1:]
    from_dir = None
    if '--from' in args:
        i = args.index('--from')
        from_dir = args[i + 1]
        del args[i:i + 2]
    if len(args) != 1:
        sys.exit(__doc__)
    main(args[0], from_dir)

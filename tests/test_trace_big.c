/* SPDX-License-Identifier: MIT */
/*
 * tfd trace on a large trace, as stress-ng --timerfd makes one: 1,024
 * timers in two processes, each re-armed 50 times at an interval of 1 us
 * and read 600 us later, about 100,000 lines.  Its HTML page stays small,
 * fits the window, is well-formed and says first what the text says; its
 * trace-event JSON stays small and keeps the Trace Event Format's rules
 * (read back with python3, when it is installed), and so does that of a
 * hundred thousand reads of one timer.
 */
#include "t.h"

#include <sys/stat.h>
#include <unistd.h>

#define PROCS 2
#define TIMERS 512 /* per process */
#define ROUNDS 50
#define EARLY_PID 101 /* its timer of fd 10 reads 100 counts too many */
#define EARLY_FD 10

static const char *tool(void)
{
	const char *t = t_tool();

	return t;
}

static void line(FILE *f, int64_t t, int pid, const char *fmt, int fd, int n)
{
	fprintf(f, "%lld.%09lld %d ", (long long)(t / SEC),
	        (long long)(t % SEC), pid);
	fprintf(f, fmt, fd, fd, n);
	fputc('\n', f);
}

/*
 * Round r starts at 1 ms + r ms; timer k of each process (fd 3 + k) is
 * armed at its start + k us (1 us, every 1 us) and read at its start +
 * 600.5 us + k us: 600 expirations, the last 0.5 us before the read (the
 * early timer's read says 700: 99.5 us before its deadline).  Closed at
 * 60 ms.
 */
static void big_trace(const char *path)
{
	FILE *f = fopen(path, "w");
	int p, k, r;

	CHECK_NE(f, NULL);
	fprintf(f, "0.000000000 100 - exec(/usr/bin/stress-ng) = 0\n");
	for (k = 0; k < TIMERS; k++)
		for (p = 0; p < PROCS; p++)
			line(f, k * US, 100 + p, "%d timerfd_create(CLOCK_REALTIME, "
			     "0) = %d", 3 + k, 0);
	for (r = 0; r < ROUNDS; r++) {
		int64_t t0 = (1 + r) * MS;

		for (k = 0; k < TIMERS; k++)
			for (p = 0; p < PROCS; p++)
				line(f, t0 + k * US, 100 + p, "%d timerfd_settime(%d, "
				     "0, {0.000001000, 0.000001000}, NULL) "
				     "[next 0.000001000] = 0", 3 + k, 0);
		for (k = 0; k < TIMERS; k++)
			for (p = 0; p < PROCS; p++)
				line(f, t0 + 600 * US + 500 + k * US, 100 + p,
				     "%d read(%d, 8) [count %d] = 8", 3 + k,
				     100 + p == EARLY_PID && 3 + k == EARLY_FD ?
				     700 : 600);
	}
	for (k = 0; k < TIMERS; k++)
		for (p = 0; p < PROCS; p++)
			line(f, 60 * MS + k * US, 100 + p, "%d close(%d) = 0",
			     3 + k, 0);
	CHECK_EQ(fclose(f), 0);
}

/* A file at path holding text, then more. */
static void write_file(const char *path, const char *text, const char *more)
{
	FILE *f = fopen(path, "w");

	CHECK(f);
	CHECK_GE(fputs(text, f), 0);
	CHECK_GE(fputs(more, f), 0);
	CHECK_EQ(fclose(f), 0);
}

static long file_size(const char *path)
{
	struct stat st;

	CHECK_EQ(stat(path, &st), 0);
	return (long)st.st_size;
}

static void rm_dir(const char *dir)
{
	char cmd[256], out[256], err[256];

	snprintf(cmd, sizeof(cmd), "rm -r %s", dir);
	CHECK_EQ(t_sh(cmd, out, sizeof(out), err, sizeof(err)), 0);
}

/* A directory of the test's own (dir: a template for mkdtemp), and the
 * name of the trace in it, DIR/t, in path. */
static void test_dir(char *dir, char *path, size_t size)
{
	CHECK_NE(mkdtemp(dir), NULL);
	snprintf(path, size, "%s/t", dir);
}

/* Without python3 to read back what the test made ("the page back"), the
 * test's directory is removed and the test skipped. */
static void need_python(const char *dir, const char *what)
{
	char out[256], err[256];

	if (t_sh("command -v python3", out, sizeof(out), err, sizeof(err))) {
		rm_dir(dir);
		t_skip("no python3 to read %s", what);
	}
}

/*
 * The Trace Event Format's rules that a viewer relies on (its spec,
 * "Trace Event Format", and what Perfetto's JSON importer reads): an
 * object with a "traceEvents" array; each event has a string name, a ph
 * of those we write, integer pid and tid, a ts in microseconds (a
 * number); X has a dur >= 0; i has s of g, p or t; C has args of numbers;
 * M is process_name or thread_name with args.name a string; B and E
 * balance per thread; each process and thread that has events is named.
 * Prints "rules: N broken" and the first few, then what the caller
 * asks (argv[2:] evaluated over ev).
 */
static const char chrome_rules[] =
	"import json, sys\n"
	"d = json.load(open(sys.argv[1]))\n"
	"assert isinstance(d, dict) and isinstance(d.get('traceEvents'), list)\n"
	"ev = d['traceEvents']\n"
	"num = lambda v: type(v) in (int, float)\n"
	"bad, open_, pname, tname, used = [], {}, set(), set(), set()\n"
	"for e in ev:\n"
	"    ph, key = e.get('ph'), (e.get('pid'), e.get('tid'))\n"
	"    why = []\n"
	"    if ph not in ('X', 'i', 'C', 'M', 'B', 'E'): why.append('ph')\n"
	"    if type(e.get('name')) is not str: why.append('name')\n"
	"    if type(key[0]) is not int or type(key[1]) is not int:\n"
	"        why.append('pid/tid')\n"
	"    if ph == 'M':\n"
	"        if e.get('name') not in ('process_name', 'thread_name') or \\\n"
	"           type(e.get('args', {}).get('name')) is not str:\n"
	"            why.append('metadata')\n"
	"        elif e['name'] == 'process_name': pname.add(key[0])\n"
	"        else: tname.add(key)\n"
	"    else:\n"
	"        used.add(key)\n"
	"        if not num(e.get('ts')) or e['ts'] < 0: why.append('ts')\n"
	"    if ph == 'X' and (not num(e.get('dur')) or e['dur'] < 0):\n"
	"        why.append('dur')\n"
	"    if ph == 'i' and e.get('s') not in ('g', 'p', 't'): why.append('s')\n"
	"    if ph == 'C' and (not e.get('args') or\n"
	"                      not all(num(v) for v in e['args'].values())):\n"
	"        why.append('counter')\n"
	"    if ph == 'B': open_[key] = open_.get(key, 0) + 1\n"
	"    if ph == 'E':\n"
	"        if not open_.get(key): why.append('E without B')\n"
	"        else: open_[key] -= 1\n"
	"    if why: bad.append((why, e))\n"
	"bad += [('B without E', k) for k, n in open_.items() if n]\n"
	"bad += [('process not named', p) for p in {k[0] for k in used} - pname]\n"
	"bad += [('thread not named', k) for k in used - tname if k[0] != 0]\n"
	"print('rules: %d broken' % len(bad), bad[:3])\n"
	"n = lambda ph, name=None: sum(1 for e in ev if e['ph'] == ph and\n"
	"                              (name is None or e['name'] == name))\n"
	"for a in sys.argv[2:]: print(eval(a))\n";

/*
 * --chrome-json of the large trace: each arming's deadlines are drawn
 * within a budget for the file (51,200 armings of 1,000 deadlines each
 * were 51 million instants, GBs), the rest counted in the armed span.
 * The file is bounded by ulimit, so a writer without a budget fails.
 */
TEST_LIMIT(trace_chrome_json_of_1024_timers_re_armed_50_times, 120)
{
	char dir[] = "/tmp/tfd-tbig.XXXXXX", path[64], json[80], cmd[1024];
	static char out[1 << 16], err[4096];
	long size;

	test_dir(dir, path, sizeof(path));
	snprintf(json, sizeof(json), "%s/t.json", dir);
	big_trace(path);
	/* 64 MB at most, or SIGXFSZ */
	snprintf(cmd, sizeof(cmd), "ulimit -f 65536 && %s trace %s "
	         "--chrome-json %s >/dev/null", tool(), path, json);
	CHECKF(t_sh(cmd, out, sizeof(out), err, sizeof(err)) == 0, "%s", err);
	size = file_size(json);
	CHECKF(size < 40L << 20, "%ld bytes", size);
	snprintf(cmd, sizeof(cmd), "the JSON back (%ld bytes written)", size);
	need_python(dir, cmd);
	snprintf(cmd, sizeof(cmd), "%s/rules.py", dir);
	write_file(cmd, chrome_rules, "");
	snprintf(cmd, sizeof(cmd), "python3 %s/rules.py %s "
	         "\"n('i', 'read'), n('X', 'armed'), n('M', 'thread_name')\" "
	         "\"n('i', 'due') <= 200000, n('C')\" "
	         "\"sorted((e['pid'], e['args']['name']) for e in ev if "
	         "e['name'] == 'process_name')\" "
	         "\"sorted({(e['args']['due'], e['args']['due_drawn']) for e in ev "
	         "if e['ph'] == 'X'})\" "
	         "\"sorted({e['args']['late_us'] for e in ev if e['name'] == "
	         "'read'})\"", dir, json);
	CHECKF(t_sh(cmd, out, sizeof(out), err, sizeof(err)) == 0, "%s", err);
	CHECKF(!strcmp(out,
	       "rules: 0 broken []\n"
	       "(51200, 51200, 1024)\n"
	       "(True, 51200)\n"
	       "[(100, 'stress-ng'), (101, 'pid 101')]\n"
	       /* 1000 due in each 1 ms arming (the last: 10 ms to the
	        * close), 3 of each drawn: 3 * 51200 <= 200000 */
	       "[(1000, 3), (10000, 3)]\n"
	       "[-99.5, 0.5]\n"),
	       "the events read back:\n%s", out);
	rm_dir(dir);
}

/*
 * The page read back (python3's html.parser; each SVG with xml.etree):
 * every tag closed in order; each SVG fits the window (width 100%, a
 * viewBox, no height) and none is taller than a block of 17 lanes; the
 * totals come first and say what the text's "all" lines say; the lanes
 * are named by program and pid.  Prints what the test compares.
 */
static const char page_check[] =
	"import sys, re, html.parser, xml.etree.ElementTree as ET\n"
	"page = open(sys.argv[1], encoding='utf-8').read()\n"
	"text = open(sys.argv[2], encoding='utf-8').read()\n"
	"VOID = {'meta', 'br', 'link', 'img', 'input', 'hr', 'wbr'}\n"
	"class P(html.parser.HTMLParser):\n"
	"    def __init__(s):\n"
	"        super().__init__()\n"
	"        s.stack, s.bad, s.k, s.cur, s.name, s.names = [], [], {}, None, None, []\n"
	"    def handle_starttag(s, tag, attrs):\n"
	"        a = dict(attrs)\n"
	"        if tag not in VOID: s.stack.append(tag)\n"
	"        if 'data-k' in a: s.cur = a['data-k']; s.k[s.cur] = ''\n"
	"        if a.get('class') == 'name': s.name = ''\n"
	"    def handle_startendtag(s, tag, attrs): pass\n"
	"    def handle_endtag(s, tag):\n"
	"        if s.stack and s.stack[-1] == tag: s.stack.pop()\n"
	"        else: s.bad.append(tag)\n"
	"        if tag == 'td': s.cur = None\n"
	"        if tag == 'text' and s.name is not None:\n"
	"            s.names.append(s.name); s.name = None\n"
	"    def handle_data(s, d):\n"
	"        if s.cur: s.k[s.cur] += d\n"
	"        if s.name is not None: s.name += d\n"
	"p = P(); p.feed(page); p.close()\n"
	"print('tags:', p.bad[:3], p.stack)\n"
	"hs = []\n"
	"for s in re.findall(r'<svg .*?</svg>', page, re.S):\n"
	"    e = ET.fromstring(s)\n"
	"    assert e.get('width') == '100%' and e.get('height') is None, s[:200]\n"
	"    hs.append(float(e.get('viewBox').split()[3]))\n"
	"print('svgs:', len(hs), max(hs) <= 60 + 76 * 17 + 40)\n"
	"m = re.search(r'^all: (\\d+) timers?, (\\d+) arms?, (\\d+) reads? with a '\n"
	"    r'count \\((\\d+) EAGAIN, (\\d+) failed\\), (\\d+) expirations? read, '\n"
	"    r'(\\S+) due by the end\\n  lateness +p50 (\\S+ us)  p90 (\\S+ us)  '\n"
	"    r'p99 (\\S+ us)  max (\\S+ us)  early (\\d+)  \\(of (\\d+) reads\\)',\n"
	"    text, re.M)\n"
	"want = dict(zip('timers arms reads eagain failed expirations due p50 '\n"
	"                'p90 p99 max early of'.split(), m.groups()))\n"
	"want['lines'], want['processes'] = re.match(\n"
	"    r'trace .*: (\\d+) lines, (\\d+) process', text).groups()\n"
	"print('totals:', {k: (v, p.k.get(k)) for k, v in want.items()\n"
	"                  if p.k.get(k) != v} or 'as the text says')\n"
	"print('first:', page.index('data-k=\"early\"') < page.index('<svg'))\n"
	"print(want['timers'], want['reads'], want['p50'], want['max'], want['early'])\n"
	"print('lanes:', sorted({re.sub(r'\\d+$', 'N', n) for n in p.names}))\n";

/*
 * --html of the large trace: under 2 MB (stress-ng's 1,024 timers made a
 * page of 23 MB, 76,000 px tall, a lane per timer), the totals first,
 * a block per process of 16 lanes and one that folds the other 496.
 */
TEST_LIMIT(trace_html_of_1024_timers_fits_and_sums_up, 120)
{
	char dir[] = "/tmp/tfd-tbig.XXXXXX", path[64], cmd[1024];
	static char out[1 << 16], err[4096];
	long size;

	test_dir(dir, path, sizeof(path));
	big_trace(path);
	snprintf(cmd, sizeof(cmd), "%s trace %s --html %s.html --svg %s.svg "
	         ">%s.txt", tool(), path, path, path, path);
	CHECKF(t_sh(cmd, out, sizeof(out), err, sizeof(err)) == 0, "%s", err);
	snprintf(cmd, sizeof(cmd), "%s.html", path);
	size = file_size(cmd);
	CHECKF(size < 2L << 20, "the page: %ld bytes", size);
	snprintf(cmd, sizeof(cmd), "%s.svg", path);
	size = file_size(cmd);
	CHECKF(size < 2L << 20, "the SVG: %ld bytes", size);
	need_python(dir, "the page back");
	snprintf(cmd, sizeof(cmd), "%s/page.py", dir);
	write_file(cmd, page_check, "");
	snprintf(cmd, sizeof(cmd), "python3 %s/page.py %s.html %s.txt && "
	         "python3 -c 'import sys, xml.etree.ElementTree as E; "
	         "e = E.parse(sys.argv[1]).getroot(); print(e.get(\"width\"), "
	         "e.get(\"height\"))' %s.svg", dir, path, path, path);
	CHECKF(t_sh(cmd, out, sizeof(out), err, sizeof(err)) == 0, "%s", err);
	CHECKF(!strcmp(out,
	       "tags: [] []\n"
	       "svgs: 2 True\n"
	       "totals: as the text says\n"
	       "first: True\n"
	       "1024 51200 0.5 us 0.5 us 50\n"
	       "lanes: ['496 more timers, folded', 'pid 101 \xc2\xb7 fd N', "
	       "'stress-ng 100 \xc2\xb7 fd N']\n"
	       "100% None\n"),
	       "the page read back:\n%s", out);
	rm_dir(dir);
}

/* Twenty processes of a timer each: sixteen blocks of their own, one for
 * the other four, in both pictures. */
TEST(trace_picture_folds_processes_beyond_sixteen)
{
	char dir[] = "/tmp/tfd-tbig.XXXXXX", path[64], cmd[1024];
	static char out[1 << 16], err[4096];
	FILE *f;
	int i;

	test_dir(dir, path, sizeof(path));
	f = fopen(path, "w");
	CHECK_NE(f, NULL);
	for (i = 0; i < 20; i++)
		line(f, i * MS, 200 + i, "%d timerfd_create(CLOCK_MONOTONIC, 0) "
		     "= %d", 3, 0);
	CHECK_EQ(fclose(f), 0);
	snprintf(cmd, sizeof(cmd), "%s trace %s --html %s.html --svg %s.svg "
	         ">/dev/null && grep -c '<details' %s.html && "
	         "grep -c '<g transform' %s.svg && grep -o '4 other processes' "
	         "%s.html %s.svg && grep -c 'class=\"name\">pid 219 ' %s.svg",
	         tool(), path, path, path, path, path, path, path, path);
	CHECKF(t_sh(cmd, out, sizeof(out), err, sizeof(err)) == 0, "%s", err);
	/* the page: 17 blocks, the table of timers, the text; its heading
	 * and the block's say what it folds */
	snprintf(cmd, sizeof(cmd), "19\n17\n%s.html:4 other processes\n"
	         "%s.html:4 other processes\n%s.svg:4 other processes\n1\n",
	         path, path, path);
	CHECKF(!strcmp(out, cmd), "'%s', not '%s'", out, cmd);
	rm_dir(dir);
}

/* What check.py prints of a trace-event file: the counts the test below
 * compares, one per line. */
static const char chrome_check[] =
	"import json, sys\n"
	"d = json.load(open(sys.argv[1]))\n"
	"ev = d['traceEvents']\n"
	"def n(ph, name, pid=None):\n"
	"    return sum(1 for e in ev if e['ph'] == ph and e['name'] == name\n"
	"               and (pid is None or e['pid'] == pid))\n"
	"procs = sorted((e['pid'], e['args']['name']) for e in ev\n"
	"               if e['ph'] == 'M' and e['name'] == 'process_name')\n"
	"threads = sorted((e['pid'], e['tid'], e['args']['name']) for e in ev\n"
	"                 if e['ph'] == 'M' and e['name'] == 'thread_name')\n"
	"late = set(e['args']['us'] for e in ev if e['ph'] == 'C')\n"
	"armed = [e for e in ev if e['ph'] == 'X']\n"
	"print(len(ev) > 200000, d['displayTimeUnit'])\n"
	"print(procs)\n"
	"print(threads)\n"
	"print(n('i', 'read', 7), n('C', 'lateness timer 1 (us)', 7), late)\n"
	"print(n('i', 'due', 7), armed[0]['args']['due'], armed[0]['ts'],\n"
	"      armed[0]['dur'], armed[0]['args']['interval_ns'])\n"
	"print(n('i', 'read: EAGAIN', 8), n('i', 'closed', 7),\n"
	"      n('i', 'moved +1 s', 0), n('X', 'armed', 8))\n";

/*
 * tfd trace --chrome-json: the trace as Chrome's trace-event JSON, read
 * back (python3's json, when it is installed) and held to the format's
 * rules (chrome_rules).  A hundred thousand reads
 * of a timer every 1 ms, each 10 us late, in a process that tfd exec
 * named (its exec line); a second process, not named, with a timer read
 * too early; a move of virtual time.
 */
TEST_LIMIT(trace_chrome_json_of_a_hundred_thousand_reads, 60)
{
	char dir[] = "/tmp/tfd-chrome.XXXXXX", path[64], cmd[512];
	static char out[1 << 16], err[4096];
	FILE *f;
	long i;

	test_dir(dir, path, sizeof(path));
	f = fopen(path, "w");
	CHECK_NE(f, NULL);
	fprintf(f, "0.000000000 7 - exec(/usr/local/bin/prog) = 0\n"
	        "0.000000000 7 3 timerfd_create(CLOCK_MONOTONIC, 0) = 3\n"
	        "0.000000000 7 3 timerfd_settime(3, 0, {0.001000000, "
	        "0.001000000}, NULL) [next 0.001000000] = 0\n"
	        "0.000000000 8 3 timerfd_create(CLOCK_REALTIME, 0) = 3\n"
	        "0.000000000 8 3 timerfd_settime(3, 0, {50.000000000, "
	        "0.000000000}, NULL) [next 50.000000000] = 0\n"
	        "0.500000000 8 3 read(3, 8) [count 0] = -1 EAGAIN\n"
	        "1.000000000 7 - virtual-advance(+1.000000000) = 0\n");
	for (i = 1; i <= 100000; i++)
		fprintf(f, "%ld.%09ld 7 3 read(3, 8) [count 1] = 8\n",
		        i / 1000, i % 1000 * 1000000 + 10000);
	fprintf(f, "100.100000000 7 3 close(3) = 0\n");
	CHECK_EQ(fclose(f), 0);
	snprintf(cmd, sizeof(cmd), "%s trace %s --chrome-json %s.json "
	         ">/dev/null && tail -c 3 %s.json", tool(), path, path, path);
	CHECKF(t_sh(cmd, out, sizeof(out), err, sizeof(err)) == 0, "%s", err);
	CHECKF(!strcmp(out, "\n]}") || !strcmp(out, "]}\n"), "'%s'", out);
	need_python(dir, "the JSON back");
	snprintf(path, sizeof(path), "%s/check.py", dir);
	write_file(path, chrome_rules, chrome_check);
	snprintf(cmd, sizeof(cmd), "python3 %s/check.py %s/t.json", dir, dir);
	CHECKF(t_sh(cmd, out, sizeof(out), err, sizeof(err)) == 0, "%s", err);
	CHECKF(!strcmp(out,
	       "rules: 0 broken []\n"
	       "True ns\n"
	       "[(0, 'virtual clock'), (7, 'prog'), (8, 'pid 8')]\n"
	       "[(7, 1, 'timer 1 (fd 3, CLOCK_MONOTONIC)'), "
	       "(8, 2, 'timer 2 (fd 3, CLOCK_REALTIME)')]\n"
	       "100000 100000 {10.0}\n"
	       /* 100100 due by the close, the first 10000 drawn */
	       "10000 100100 0.0 100100000.0 1000000\n"
	       "1 1 1 1\n"),
	       "the events read back:\n%s", out);
	snprintf(cmd, sizeof(cmd), "rm -r %s", dir);
	CHECK_EQ(t_sh(cmd, out, sizeof(out), err, sizeof(err)), 0);
}

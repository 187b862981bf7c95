#!/usr/bin/env python3
"""check_prom.py - a small, strict checker of `bctl metrics` output.

The Prometheus text exposition format, version 0.0.4
(https://prometheus.io/docs/instrumenting/exposition_formats/), as bctl
writes it, checked by hand (prometheus_client is not a dependency):

  - every line is "# HELP name text", "# TYPE name type" or a sample
    "name{label="value",...} value" (no blank lines, no other comments, no
    timestamps); the text ends with a newline;
  - names match [a-zA-Z_:][a-zA-Z0-9_:]*, label names
    [a-zA-Z_][a-zA-Z0-9_]* (not starting with "__"), label values are
    escaped (only \\\\, \\" and \\n after a backslash; no raw newline or
    double quote), values are Go-style floats, NaN or +Inf/-Inf;
  - every family has exactly one HELP and one TYPE, both before its first
    sample, and its samples are contiguous; TYPE is counter, gauge or
    histogram; counters end in _total, gauges and histograms do not;
    counter values are >= 0;
  - a histogram F's samples are F_bucket{...,le="B"}, F_sum and F_count,
    per label set: buckets in increasing le, ending at le="+Inf",
    cumulative (never decreasing, never negative), _count equal to the
    +Inf bucket, and one _sum and one _count;
  - no series (name + label set) appears twice, no label twice in one;
  - with --breakers A,B,...: each breaker has every per-breaker series
    (below), zeros included, and no series names another breaker;
    the segment-level families are there;
  - with --buckets A,B,... (--budgets A,B,..., --holds A,B,...): the same
    for every per-bucket (per-budget, per-breaker-with-hold_histogram-on)
    family; with an empty list, those families must be absent (bctl prints
    them only if such a record exists);
  - --expect 'series=value' (repeatable): that sample has that value;
    --absent NAME: no family NAME; --series N: exactly N samples in all
    (the cardinality `bctl metrics --help` documents per option).

Usage: check_prom.py [--breakers A,B] [--buckets A,B] [--budgets A,B] [--holds A,B]
                     [--expect S=V]... [--absent N]... [--series N] FILE|-
       check_prom.py --self-test
Exit 0 when everything holds; otherwise the problems on stderr, exit 1.
"""
import re
import sys

NAME_RE = r'[a-zA-Z_:][a-zA-Z0-9_:]*'
LABEL_RE = r'[a-zA-Z_][a-zA-Z0-9_]*'
LVALUE_RE = r'(?:[^"\\\n]|\\[\\"n])*'
FLOAT_RE = (r'(?:[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?'
            r'|[+-]?Inf|NaN)')
SAMPLE = re.compile(r'^(' + NAME_RE + r')(?:\{(.*)\})? (' + FLOAT_RE + r')$')
LABEL_PAIR = re.compile(r'(' + LABEL_RE + r')="(' + LVALUE_RE + r')"')
HELP = re.compile(r'^# HELP (' + NAME_RE + r') (.*)$')
TYPE = re.compile(r'^# TYPE (' + NAME_RE + r') (\S+)$')

STATES = ['closed', 'open', 'half_open']
MODES = ['normal', 'forced_open', 'disabled', 'metrics_only']
CAUSES = ['open', 'cooling', 'full']
REASONS = ['timeout', 'connect', 'server_error', 'overloaded',
           'rate_limited', 'other']

# family -> (type, extra label, its values) for every breaker
PER_BREAKER = {
    'breakerd_state': ('gauge', 'state', STATES),
    'breakerd_mode': ('gauge', 'mode', MODES),
    'breakerd_allowed_total': ('counter', None, None),
    'breakerd_rejected_total': ('counter', 'cause', CAUSES),
    'breakerd_successes_total': ('counter', None, None),
    'breakerd_failures_total': ('counter', 'reason', REASONS),
    'breakerd_healthy_errors_total': ('counter', None, None),
    'breakerd_ignored_total': ('counter', None, None),
    'breakerd_cancelled_total': ('counter', None, None),
    'breakerd_throttled_total': ('counter', None, None),
    'breakerd_probes_total': ('counter', None, None),
    'breakerd_reclaimed_total': ('counter', None, None),
    'breakerd_transitions_total': ('counter', None, None),
    'breakerd_stale_total': ('counter', None, None),
    'breakerd_consecutive_failures': ('gauge', None, None),
    'breakerd_cooling_level': ('gauge', None, None),
    'breakerd_open_remaining_seconds': ('gauge', None, None),
    'breakerd_cool_until_remaining_seconds': ('gauge', None, None),
    'breakerd_probes_in_flight': ('gauge', None, None),
    'breakerd_in_flight': ('gauge', None, None),
    'breakerd_window_calls': ('gauge', None, None),
    'breakerd_window_failures': ('gauge', None, None),
    'breakerd_arrivals_total': ('counter', None, None),
    'breakerd_completions_total': ('counter', None, None),
    'breakerd_oldest_in_flight_seconds': ('gauge', None, None),
    'breakerd_max_concurrent': ('gauge', None, None),
    'breakerd_half_open_probes': ('gauge', None, None),
}
# the permit hold-time histogram: only breakers with hold_histogram on
PER_HOLD = {
    'breakerd_permit_hold_seconds': ('histogram', None, None),
}
# family -> (type, None, None) for every GCRA bucket / retry budget
PER_BUCKET = {
    'breakerd_bucket_taken_total': ('counter', None, None),
    'breakerd_bucket_denied_total': ('counter', None, None),
    'breakerd_bucket_tokens_taken_total': ('counter', None, None),
    'breakerd_bucket_tokens': ('gauge', None, None),
    'breakerd_bucket_rate_per_second': ('gauge', None, None),
    'breakerd_bucket_burst': ('gauge', None, None),
}
PER_BUDGET = {
    'breakerd_budget_deposits_total': ('counter', None, None),
    'breakerd_budget_retries_total': ('counter', None, None),
    'breakerd_budget_floor_retries_total': ('counter', None, None),
    'breakerd_budget_deferred_total': ('counter', None, None),
    'breakerd_budget_tokens': ('gauge', None, None),
    'breakerd_budget_pool_tokens': ('gauge', None, None),
    'breakerd_budget_floor_tokens': ('gauge', None, None),
    'breakerd_budget_floor_per_second': ('gauge', None, None),
    'breakerd_budget_floor_burst': ('gauge', None, None),
    'breakerd_budget_ratio': ('gauge', None, None),
}
SEGMENT = {
    'breakerd_segment_capacity': 'gauge',
    'breakerd_segment_records': 'gauge',
    'breakerd_events_total': 'counter',
}


def unescape(v):
    return re.sub(r'\\(.)', lambda m: {'n': '\n'}.get(m.group(1), m.group(1)), v)


def parse_labels(text, errs, where):
    """'a="x",b="y"' -> list of (name, value); errors into errs."""
    labels, pos = [], 0
    if text == '':
        return labels
    while True:
        m = LABEL_PAIR.match(text, pos)
        if not m:
            errs.append('%s: bad label list at %r' % (where, text[pos:pos + 40]))
            return None
        labels.append((m.group(1), unescape(m.group(2))))
        pos = m.end()
        if pos == len(text):
            return labels
        if text[pos] != ',':
            errs.append('%s: expected "," in labels at %r' % (where, text[pos:pos + 40]))
            return None
        pos += 1
        if pos == len(text):  # a trailing comma: allowed by the spec
            return labels


HIST_SUFFIXES = ('_bucket', '_sum', '_count')


def family_of(name, types):
    """The family a sample belongs to: a histogram's _bucket, _sum and
    _count samples belong to the histogram, everything else to itself."""
    for suf in HIST_SUFFIXES:
        if name.endswith(suf) and types.get(name[:-len(suf)]) == 'histogram':
            return name[:-len(suf)]
    return name


def check_histograms(types, hist, errs):
    """hist: family -> {label set (sorted tuple, no le) -> {'buckets':
    [(le, v)], 'sum': [v], 'count': [v]}}; errors into errs."""
    for fam, per in hist.items():
        for lab, h in per.items():
            where = '%s%r' % (fam, dict(lab))
            les = [le for le, _ in h['buckets']]
            if not les or les[-1] != float('inf'):
                errs.append('%s: buckets do not end at le="+Inf"' % where)
            if les != sorted(set(les)):
                errs.append('%s: le values not increasing' % where)
            vals = [v for _, v in h['buckets']]
            if any(b < a for a, b in zip(vals, vals[1:])) or any(v < 0 for v in vals):
                errs.append('%s: buckets not cumulative' % where)
            if len(h['sum']) != 1 or len(h['count']) != 1:
                errs.append('%s: wants one _sum and one _count' % where)
            elif vals and h['count'][0] != vals[-1]:
                errs.append('%s: _count %r is not the +Inf bucket %r'
                            % (where, h['count'][0], vals[-1]))


def series_key(name, labels):
    return name + '{' + ','.join('%s=%r' % kv for kv in sorted(labels)) + '}'


def check_records(kind, fams, names, types, fam_series, samples, errs):
    """Every family of fams has one series per name in names (and per
    value of its extra label), and no other; errors into errs."""
    for fam, (typ, label, values) in fams.items():
        if types.get(fam) != typ:
            errs.append('missing %s family %s' % (typ, fam))
            continue
        got = fam_series.get(fam, [])
        want = set()
        for b in names:
            for v in (values or [None]):
                want.add((b, v))
        have = set()
        for lab in got:
            extra = set(lab) - {'name'} - ({label} if label else set())
            if 'name' not in lab or (label and label not in lab) or extra:
                errs.append('%s: unexpected label set %r' % (fam, lab))
                continue
            have.add((lab['name'], lab.get(label) if label else None))
        for b, v in sorted(want - have, key=str):
            errs.append('%s: no series for %s %r%s' %
                        (fam, kind, b, ' %s=%r' % (label, v) if label else ''))
        for b, v in sorted(have - want, key=str):
            errs.append('%s: unexpected series %r %r' % (fam, b, v))
        if label and fam in ('breakerd_state', 'breakerd_mode'):
            for b in names:
                ones = sum(samples.get(series_key(fam, [('name', b), (label, v)]), 0)
                           for v in values)
                if ones != 1:
                    errs.append('%s{name=%r}: %s of the values are 1, want one'
                                % (fam, b, ones))


def check(text, breakers=None, expects=(), absent=(), buckets=None,
          budgets=None, holds=None):
    """Returns (errors, samples) where samples maps series_key -> value."""
    errs = []
    if text and not text.endswith('\n'):
        errs.append('the text does not end with a newline')
    helps, types, first_sample, done = {}, {}, {}, set()
    samples, fam_series, hist = {}, {}, {}
    current = None
    for no, line in enumerate(text.split('\n')[:-1] if text else [], 1):
        where = 'line %d' % no
        if line.startswith('#'):
            m = HELP.match(line)
            if m:
                name = m.group(1)
                if name in helps:
                    errs.append('%s: second HELP for %s' % (where, name))
                if name in first_sample:
                    errs.append('%s: HELP for %s after its samples' % (where, name))
                helps[name] = m.group(2)
                if re.search(r'\\[^\\n]', m.group(2)):
                    errs.append('%s: bad escape in HELP text' % where)
                continue
            m = TYPE.match(line)
            if m:
                name, typ = m.group(1), m.group(2)
                if name in types:
                    errs.append('%s: second TYPE for %s' % (where, name))
                if name in first_sample:
                    errs.append('%s: TYPE for %s after its samples' % (where, name))
                if typ not in ('counter', 'gauge', 'histogram'):
                    errs.append('%s: TYPE %s of %s is not counter, gauge or histogram'
                                % (where, typ, name))
                if typ == 'histogram' and name.endswith(('_total',) + HIST_SUFFIXES):
                    errs.append('%s: histogram %s ends in a reserved suffix'
                                % (where, name))
                if typ == 'counter' and not name.endswith('_total'):
                    errs.append('%s: counter %s does not end in _total' % (where, name))
                if typ != 'counter' and name.endswith('_total'):
                    errs.append('%s: %s %s ends in _total' % (where, typ, name))
                types[name] = typ
                continue
            errs.append('%s: unexpected comment %r' % (where, line[:60]))
            continue
        m = SAMPLE.match(line)
        if not m:
            errs.append('%s: not a sample line: %r' % (where, line[:80]))
            continue
        name, ltext, value = m.group(1), m.group(2) or '', m.group(3)
        sname, name = name, family_of(name, types)
        if name not in helps or name not in types:
            errs.append('%s: sample of %s before its HELP and TYPE' % (where, name))
        if name != current:
            if name in done:
                errs.append('%s: samples of %s are not contiguous' % (where, name))
            if current is not None:
                done.add(current)
            current = name
        first_sample.setdefault(name, no)
        labels = parse_labels(ltext, errs, where)
        if labels is None:
            continue
        names = [k for k, _ in labels]
        if len(set(names)) != len(names):
            errs.append('%s: a label appears twice' % where)
        if any(k.startswith('__') for k in names):
            errs.append('%s: reserved label name' % where)
        key = series_key(sname, labels)
        if key in samples:
            errs.append('%s: duplicate series %s' % (where, key))
        v = float(value.replace('Inf', 'inf').replace('NaN', 'nan'))
        if types.get(name) == 'counter' and not v >= 0:
            errs.append('%s: counter %s is %s' % (where, name, value))
        samples[key] = v
        if types.get(name) == 'histogram':
            rest = tuple(sorted((k, x) for k, x in labels if k != 'le'))
            h = hist.setdefault(name, {}).setdefault(
                rest, {'buckets': [], 'sum': [], 'count': []})
            le = dict(labels).get('le')
            if sname == name + '_bucket':
                if le is None or not re.match('^' + FLOAT_RE + '$', le):
                    errs.append('%s: bucket without a valid le label' % where)
                else:
                    h['buckets'].append((float(le.replace('Inf', 'inf')), v))
            elif sname == name + '_sum':
                h['sum'].append(v)
            elif sname == name + '_count':
                h['count'].append(v)
                fam_series.setdefault(name, []).append(dict(rest))
            else:
                errs.append('%s: %s is no sample of histogram %s' % (where, sname, name))
            continue
        fam_series.setdefault(name, []).append(dict(labels))
    for name in set(helps) | set(types):
        if name not in helps or name not in types:
            errs.append('family %s lacks HELP or TYPE' % name)
    check_histograms(types, hist, errs)

    if breakers is not None:
        for fam, typ in SEGMENT.items():
            if types.get(fam) != typ:
                errs.append('missing %s family %s' % (typ, fam))
            elif len(fam_series.get(fam, [])) != 1:
                errs.append('%s must have exactly one sample' % fam)
        check_records('breaker', PER_BREAKER, breakers, types, fam_series,
                      samples, errs)
    for kind, fams, names in (('bucket', PER_BUCKET, buckets),
                              ('budget', PER_BUDGET, budgets),
                              ('hold', PER_HOLD, holds)):
        if names == []:
            errs.extend('family %s present with no %s' % (fam, kind)
                        for fam in fams if fam in types or fam in fam_series)
        elif names is not None:
            check_records(kind, fams, names, types, fam_series, samples, errs)
    for exp in expects:
        key, _, val = exp.rpartition('=')
        m = SAMPLE.match(key + ' ' + val)
        if not m:
            errs.append('bad --expect %r' % exp)
            continue
        labels = parse_labels(m.group(2) or '', errs, '--expect')
        k = series_key(m.group(1), labels or [])
        if k not in samples:
            errs.append('expected series %s is missing' % key)
        elif samples[k] != float(val):
            errs.append('%s is %r, expected %s' % (key, samples[k], val))
    for name in absent:
        if name in types or name in fam_series:
            errs.append('family %s should be absent' % name)
    return errs, samples


GOOD = '''# HELP x_total A counter.
# TYPE x_total counter
x_total{name="a\\\\b\\"c\\nd"} 3
x_total{name="b"} 0
# HELP g A gauge.
# TYPE g gauge
g 1.5
# HELP h_seconds A histogram.
# TYPE h_seconds histogram
h_seconds_bucket{name="a",le="0.005"} 1
h_seconds_bucket{name="a",le="1"} 3
h_seconds_bucket{name="a",le="+Inf"} 4
h_seconds_sum{name="a"} 12.5
h_seconds_count{name="a"} 4
h_seconds_bucket{name="b",le="0.005"} 0
h_seconds_bucket{name="b",le="+Inf"} 0
h_seconds_sum{name="b"} 0
h_seconds_count{name="b"} 0
'''

HIST = '# HELP h H.\n# TYPE h histogram\n'

BAD = {
    'sample before TYPE': '# HELP g G.\ng 1\n# TYPE g gauge\n',
    'no HELP': '# TYPE g gauge\ng 1\n',
    'counter without _total': '# HELP c C.\n# TYPE c counter\nc 1\n',
    'gauge with _total': '# HELP g_total G.\n# TYPE g_total gauge\ng_total 1\n',
    'untyped': '# HELP u U.\n# TYPE u untyped\nu 1\n',
    'raw quote in label': '# HELP g G.\n# TYPE g gauge\ng{name="a"b"} 1\n',
    'bad escape in label': '# HELP g G.\n# TYPE g gauge\ng{name="a\\tb"} 1\n',
    'duplicate series': '# HELP g G.\n# TYPE g gauge\ng{name="a"} 1\ng{name="a"} 2\n',
    'not contiguous': ('# HELP g G.\n# TYPE g gauge\n# HELP h H.\n# TYPE h gauge\n'
                       'g 1\nh 1\ng{name="x"} 1\n'),
    'bad value': '# HELP g G.\n# TYPE g gauge\ng one\n',
    'timestamp': '# HELP g G.\n# TYPE g gauge\ng 1 1700000000000\n',
    'blank line': '# HELP g G.\n# TYPE g gauge\n\ng 1\n',
    'no final newline': '# HELP g G.\n# TYPE g gauge\ng 1',
    'negative counter': '# HELP c_total C.\n# TYPE c_total counter\nc_total -1\n',
    'two TYPEs': '# HELP g G.\n# TYPE g gauge\n# TYPE g gauge\ng 1\n',
    'label twice': '# HELP g G.\n# TYPE g gauge\ng{a="1",a="2"} 1\n',
    'bad metric name': '# HELP 1g G.\n# TYPE 1g gauge\n1g 1\n',
    'histogram not cumulative': HIST + ('h_bucket{le="1"} 3\nh_bucket{le="+Inf"} 2\n'
                                        'h_sum 1\nh_count 2\n'),
    'histogram without +Inf': HIST + 'h_bucket{le="1"} 3\nh_sum 1\nh_count 3\n',
    'histogram count not +Inf': HIST + ('h_bucket{le="1"} 1\nh_bucket{le="+Inf"} 2\n'
                                        'h_sum 1\nh_count 3\n'),
    'histogram bucket without le': HIST + 'h_bucket 1\nh_sum 1\nh_count 1\n',
    'histogram le not increasing': HIST + ('h_bucket{le="1"} 1\nh_bucket{le="0.5"} 1\n'
                                           'h_bucket{le="+Inf"} 1\nh_sum 1\nh_count 1\n'),
    'histogram without _count': HIST + 'h_bucket{le="+Inf"} 1\nh_sum 1\n',
    'histogram named _total': ('# HELP h_total H.\n# TYPE h_total histogram\n'
                               'h_total_bucket{le="+Inf"} 1\nh_total_sum 1\nh_total_count 1\n'),
}


def self_test():
    bad = 0
    errs, samples = check(GOOD)
    if errs:
        print('self-test: the good text fails: %s' % errs)
        bad += 1
    elif samples.get(series_key('x_total', [('name', 'a\\b"c\nd')])) != 3:
        print('self-test: escaped label value not decoded: %r' % samples)
        bad += 1
    for what, text in BAD.items():
        errs, _ = check(text)
        if not errs:
            print('self-test: accepted: %s' % what)
            bad += 1
    # --breakers: a missing zero series is caught
    errs, _ = check('# HELP breakerd_allowed_total A.\n'
                    '# TYPE breakerd_allowed_total counter\n'
                    'breakerd_allowed_total{name="a"} 0\n', breakers=['a', 'b'])
    if not any("no series for breaker 'b'" in e for e in errs):
        print('self-test: a missing series was not caught')
        bad += 1
    # --buckets: a missing series is caught; [] wants the families absent
    bucket = ('# HELP breakerd_bucket_burst B.\n'
              '# TYPE breakerd_bucket_burst gauge\n'
              'breakerd_bucket_burst{name="k"} 5\n')
    errs, _ = check(bucket, buckets=['k', 'q'])
    if not any("breakerd_bucket_burst: no series for bucket 'q'" in e
               for e in errs):
        print('self-test: a missing bucket series was not caught')
        bad += 1
    errs, _ = check(bucket, buckets=[])
    if not any('present with no bucket' in e for e in errs):
        print('self-test: a bucket family with no bucket was not caught')
        bad += 1
    print('self-test: %d good and %d bad texts: %s'
          % (1, len(BAD), 'ok' if not bad else '%d wrong' % bad))
    return 1 if bad else 0


def main(argv):
    lists = {'--breakers': None, '--buckets': None, '--budgets': None,
             '--holds': None}
    expects, absent, path, want_series = [], [], None, None
    i = 1
    while i < len(argv):
        a = argv[i]
        if a == '--self-test':
            return self_test()
        if a == '--series' and i + 1 < len(argv):
            want_series = int(argv[i + 1])
            i += 2
            continue
        if (a in lists or a in ('--expect', '--absent')) and i + 1 < len(argv):
            v = argv[i + 1]
            if a in lists:
                lists[a] = [b for b in v.split(',') if b]
            elif a == '--expect':
                expects.append(v)
            else:
                absent.append(v)
            i += 2
            continue
        if path is not None:
            print(__doc__, file=sys.stderr)
            return 2
        path = a
        i += 1
    if path is None:
        print(__doc__, file=sys.stderr)
        return 2
    if path == '-':
        text = sys.stdin.read()
    else:
        with open(path, encoding='utf-8') as f:
            text = f.read()
    errs, samples = check(text, lists['--breakers'], expects, absent,
                          lists['--buckets'], lists['--budgets'],
                          lists['--holds'])
    if want_series is not None and len(samples) != want_series:
        errs.append('%d series, want %d' % (len(samples), want_series))
    for e in errs:
        print('check_prom: ' + e, file=sys.stderr)
    if not errs:
        counts = ''.join(', %d %s' % (len(lists[o]), o[2:])
                         for o in ('--breakers', '--buckets', '--budgets')
                         if lists[o])
        print('check_prom: ok: %d series%s' % (len(samples), counts))
    return 1 if errs else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))

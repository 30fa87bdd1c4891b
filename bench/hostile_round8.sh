#!/bin/bash
# Hostile inputs, round 8 (issue 28; bench/results/hostile_inputs.md): the whole CLI walk under a
# 4 GB address-space limit. Usage:
#   bash bench/hostile_round8.sh TREE WORKDIR [cases|kills|all]
# "cases": every case of bench/hostile_round5.sh plus the round 1-7 shapes that are CLI runs
# (special outputs, sentinels, crafted models, subnormals, formulas, wide tables, a huge block
# limit, a SIGKILL orphan), each under `ulimit -v 4000000` and `timeout BUDGET`, printing
# exit status, wall time, peak RSS (/usr/bin/time) and the last line of stderr.
# Inputs in WORKDIR beforehand: mm22.txt (Moon-Moser, 66 nodes), cp400.txt, big2.npy (500k x 300
# float32) and g200k.csv, as in round 7.
# "kills": SIGTERM at random moments into every long-running command
# (bench/signal_latency.py kill / kill-cmd, 4 GB limit): rc must be 143, latency < 2 s.
set -u
T=$(cd "$1" && pwd); W=$2; MODE=${3:-all}; PYBIN=${PYBIN:-python}
export PYTHONPATH=$T; PY="$PYBIN -m trustlab.cli"
mkdir -p "$W" && cd "$W" || exit 1
ulimit -S -v 4000000  # (soft: the 200k-record kills below raise it; under 4 GB that run is refused up front)

# one case: NAME BUDGET_S COMMAND...; prints rc, wall, peak RSS, whether it ended within the budget
case_() {
  local name=$1 budget=$2; shift 2
  /usr/bin/time -o time.txt -f "%e %M" timeout "$budget" "$@" > case.out 2> case.err
  local rc=$? wall rss
  read -r wall rss < <(tail -1 time.txt)
  local within=yes; [ "$rc" = 124 ] && within=NO
  printf '%-34s rc=%-3s %6.2f s %7.0f MB  within %4s s: %-3s | %s\n' "$name" "$rc" "$wall" "$((rss / 1024))" \
    "$budget" "$within" "$(grep -v '^$' case.err | tail -1 | cut -c1-150)"
}

if [ "$MODE" != kills ]; then
  echo "== round 5 script (its own output)"
  PYBIN=$PYBIN bash "$T/bench/hostile_round5.sh" "$T" "$W/r5" 2>&1 | sed 's/^/   /'
  echo "== cases (4 GB limit)"
  cp r5/*.csv r5/*.txt r5/*.json r5/x.npy . 2>/dev/null
  printf '0 1\n1 2\n2 0\n' > g.txt
  rm -f ff; mkfifo ff; (cat ff > ff.out &)
  case_ "cliques -o FIFO"                 60 $PY cliques g.txt -o ff -q
  case_ "cliques -o /dev/stdout"          60 $PY cliques g.txt -o /dev/stdout -q
  rm -f ln.txt tg.txt; echo old > tg.txt; ln -s tg.txt ln.txt
  case_ "partition -o symlink"            60 $PY partition sub.txt -o ln.txt -q
  echo "   (symlink still a link: $(stat -c %F ln.txt); target: $(head -c 40 tg.txt | tr '\n' ' '))"
  case_ "resolve sentinels -o"            60 $PY resolve r.csv --fields given:name,surname:name,city:string -o o.csv -q
  case_ "resolve --existing 0.x ids"      60 $PY resolve new.csv --model m.json --existing exf.csv -o o4.csv -q
  case_ "resolve --existing near 2^63"    60 $PY resolve new.csv --model m.json --existing exbig.csv -o o5.csv -q
  case_ "resolve --existing dup id"       60 $PY resolve new.csv --model m.json --existing exdup.csv -o o6.csv -q
  for k in uzero lambda2 method deep; do
    case_ "resolve --model $k"            60 $PY resolve new.csv --model m_$k.json -o o7.csv -q
  done
  for m in auto heuristic cpp qsp spp; do
    case_ "partition subnormal --method $m" 60 $PY partition sub.txt --method $m -q
  done
  case_ "resolve formulas -o"             60 $PY resolve f.csv --fields name:name -o of.csv -q
  case_ "partition 1_000"                 60 $PY partition u.txt -q
  case_ "partition 0x1p3"                 60 $PY partition h.txt -q
  case_ "privatize --m 2^63-1"            60 $PY privatize x.npy --epsilon 1 --m 9223372036854775807 -o z.npy -q
  case_ "resolve 100 x 200 columns"       120 $PY resolve wide200d.csv -q
  case_ "resolve 100 x 500 columns"       120 $PY resolve wide500d.csv -q
  case_ "resolve --max-block-size 1e5"    120 $PY resolve big.csv --fields name:name --blocking token:name --max-block-size 100000 -q
  case_ "bias weat --permutations 1e9"    120 $PY bias weat --test 1 --permutations 1000000000 --seed 1 -q
  case_ "cliques mm22 -o (1 GiB cap)"     300 $PY cliques mm22.txt -o mmout.txt -q
  case_ "cliques mm22 --count (cap 1e10)" 30  $PY cliques mm22.txt --count -q
  case_ "privatize 500k x 300"            300 $PY privatize big2.npy --epsilon 1 -o big2p.npy -q
  for m in auto heuristic cpp qsp spp; do
    case_ "partition cp400 --method $m"   300 $PY partition cp400.txt --method $m -q
  done
  case_ "resolve 200k records"            900 $PY resolve g200k.csv --id-col rec_id -o g200k.out.csv -q
fi

if [ "$MODE" != cases ]; then
  echo "== SIGTERM kills (4 GB limit): rc and latency"
  K="$PYBIN $T/bench/signal_latency.py"
  echo "-- cliques mm22 --count";  $K kill-cmd 3 2 10 cliques mm22.txt --count -q --max-count 0
  echo "-- cliques mm22 -o";       $K kill-cmd 6 2 10 cliques mm22.txt -o {out} -q
  echo "-- bias weat 1e8";         $K kill-cmd 3 3 12 bias weat --test 1 --permutations 100000000 -q
  for m in auto heuristic cpp qsp spp; do
    echo "-- partition cp400 $m";  $K kill-cmd 2 2 10 partition cp400.txt --method $m -o {out} -q
  done
  echo "-- privatize 500k x 300";  $K kill-cmd 3 1 5 privatize big2.npy --epsilon 1 -o {out}.npy -q
  # under 4 GB, resolve refuses these 200,000 records before any pair (about 3.9 GiB needed, 2.9 usable):
  # the kills run with the 6 GB limit of round 7
  echo "-- resolve 200k (6 GB)";   (ulimit -S -v 6000000; $K kill g200k.csv 3 150 --min-delay 5 --id-col rec_id)
fi

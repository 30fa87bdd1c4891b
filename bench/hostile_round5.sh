#!/bin/bash
# Hostile inputs, round 5 (issue 28; bench/results/hostile_inputs.md). Usage:
#   bash bench/hostile_round5.sh TREE WORKDIR     e.g. TREE=/work/main (before), a worktree (after)
# Runs every case under `ulimit -v 4000000` and prints exit statuses, key output and times.
# Never points an output at /dev/null: the old code would replace it when run as root.
set -u
T=$(cd "$1" && pwd); W=$2; PYBIN=${PYBIN:-python}
export PYTHONPATH=$T; PY="$PYBIN -m trustlab.cli"
mkdir -p "$W" && cd "$W" || exit 1
$PYBIN - <<'PYEOF'
import numpy as np, pandas as pd
rng = np.random.default_rng(0)
open("g.txt", "w").write("0 1\n1 2\n2 0\n")
open("sub.txt", "w").write("3\n1e-309 -1e-310\n2e-309\n")
pd.DataFrame({"id": range(1, 7), "given": ["Ann", "Anne", "Bob", "Bobby", "Carl", "Karl"],
              "surname": ["Null", "Null", "N/A", "NaN", "Smith", "Smith"],
              "city": ["Oslo", "Oslo", "-", "?", "#N/A", "None"]}).to_csv("r.csv", index=False)
pd.DataFrame({"id": [7, 8], "given": ["Anna", "Zed"], "surname": ["Null", "Q"], "city": ["Oslo", "-"]}).to_csv(
    "new.csv", index=False)
for C in (200, 500):
    base = pd.DataFrame({f"c{j}": ["".join(rng.choice(list("abcdefgh"), 5)) for _ in range(50)] for j in range(C)})
    dup = base.copy()
    for j in range(0, C, 7):
        dup[f"c{j}"] = ["".join(rng.choice(list("abcdefgh"), 5)) for _ in range(50)]
    df = pd.concat([base, dup], ignore_index=True)
    df.insert(0, "id", range(100))
    df.to_csv(f"wide{C}d.csv", index=False)
n = 20000
pd.DataFrame({"id": range(n), "name": ["smith " + "".join(rng.choice(list("abcdefghij"), 6)) for _ in range(n)],
              "city": rng.choice(["oslo", "rome", "bern"], n)}).to_csv("big.csv", index=False)
np.save("x.npy", rng.standard_normal((50, 300)))
PYEOF
ulimit -v 4000000
rm -f ff link.txt real.txt
echo "-- 1 fifo"; mkfifo ff; cat ff > ff.out & CP=$!; timeout 20 $PY cliques g.txt -o ff -q; echo "rc=$? type=$(stat -c %F ff) read=$(head -c 20 ff.out 2>/dev/null)"; kill $CP 2>/dev/null
echo "-- 2 symlink"; echo old > real.txt; ln -s real.txt link.txt; $PY cliques g.txt -o link.txt -q; echo "rc=$? link=$(stat -c %F link.txt) real=$(cat real.txt)"
echo "-- 3 sentinels"; $PY resolve r.csv --fields given:name,surname:name,city:string -o out.csv --save-model m.json -q 2>/dev/null; echo "rc=$? blank_cells=$($PYBIN -c "import pandas as pd;d=pd.read_csv('out.csv',dtype=str,keep_default_na=False);print(int((d[['surname','city']]=='').sum().sum()))")"
echo "-- 4 existing 0.1 ids"; $PYBIN -c "
import pandas as pd;d=pd.read_csv('out.csv',dtype=str,keep_default_na=False);d['entity_id']=['0.'+e for e in d['entity_id']];d.to_csv('exf.csv',index=False)
d2=pd.read_csv('out.csv',dtype=str,keep_default_na=False);d2['entity_id']=[str(2**63-1-int(e)) for e in d2['entity_id']];d2.to_csv('exbig.csv',index=False)
d3=pd.read_csv('out.csv',dtype=str,keep_default_na=False);pd.concat([d3,d3.iloc[[2]]]).to_csv('exdup.csv',index=False)"
$PY resolve new.csv --model m.json --existing exf.csv -o o4.csv -q 2>/dev/null; echo "rc=$? ids=$(cut -d, -f2 o4.csv | tail -n +2 | tr '\n' ' ')"
echo "-- 5 existing near int64 max"; $PY resolve new.csv --model m.json --existing exbig.csv -o o5.csv -q 2>&1 | grep -v warning | tail -1; echo "rc=${PIPESTATUS[0]} ids=$(cut -d, -f2 o5.csv 2>/dev/null | tail -n +2 | tr '\n' ' ')"
echo "-- 6 existing dup id"; $PY resolve new.csv --model m.json --existing exdup.csv -o o6.csv -q 2>&1 | grep -v warning | tail -1; echo "rc=${PIPESTATUS[0]} rows=$(wc -l < o6.csv 2>/dev/null)"
echo "-- 7 models"; for k in uzero lambda2 method deep; do $PYBIN -c "
import json,sys;d=json.load(open('m.json'));k='$k'
if k=='uzero': d['scorer']['u'][0]=[0,0,0,0]
if k=='lambda2': d['scorer']['lambda']=2
if k=='method': d['settings']['method']='os.system'; d['settings']['time_limit']='x'; d['settings']['max_block_size']=-1
json.dump(d,open('m_'+k+'.json','w'))
if k=='deep': open('m_deep.json','w').write('['*100000+']'*100000)"; $PY resolve new.csv --model m_$k.json -o o7.csv -q 2>&1 | grep -v "warning" | tail -1 | cut -c1-200; echo "$k rc=${PIPESTATUS[0]}"; done
echo "-- 8 subnormal"; $PY partition sub.txt --method heuristic -q 2>&1 | tail -1 | cut -c1-150; echo "rc=${PIPESTATUS[0]}"
echo "-- 9 formulas"; printf 'id,name,note\n1,ann,=HYPERLINK("http://x")\n2,anne,@SUM(A1)\n3,bob,=cmd|x\n' > f.csv; $PY resolve f.csv --fields name:name -o of.csv -q 2>/dev/null; echo "rc=$? runnable=$(tail -n +2 of.csv | cut -d, -f4- | grep -c '^[=@]')"
echo "-- 10 numbers"; printf '3\n1_000 1\n2\n' > u.txt; printf '3\n0x1p3 1\n2\n' > h.txt; $PY partition u.txt -q 2>&1 | tail -1 | cut -c1-120; echo "1_000 rc=${PIPESTATUS[0]}"; $PY partition h.txt -q 2>&1 | tail -1 | cut -c1-120; echo "0x1p3 rc=${PIPESTATUS[0]}"
$PY privatize x.npy --epsilon 1 --m 9223372036854775807 -o z.npy 2>&1 | grep -o "m=[0-9]*" | head -1
echo "-- 11 wide 200"; /usr/bin/time -f "%e s %M KB" $PY resolve wide200d.csv -q 2>&1 | grep -v warning | tail -1
echo "-- 12 wide 500"; /usr/bin/time -f "%e s %M KB" timeout 300 $PY resolve wide500d.csv -q 2>&1 | grep -v warning | tail -2 | cut -c1-160
echo "-- 13 block 100000"; /usr/bin/time -f "%e s %M KB" timeout 300 $PY resolve big.csv --fields name:name --blocking token:name --max-block-size 100000 -q 2>&1 | tail -2 | cut -c1-200

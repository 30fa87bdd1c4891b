#!/bin/bash
# usage: twocol_all.sh TREE TAG OUT.jsonl
cd $1
for spec in "febrl1 given_name,surname" "febrl2 given_name,surname" "febrl3 given_name,surname" "febrl4 given_name,surname" \
  "rldata500 fname_c1,lname_c1" "rldata10000 fname_c1,lname_c1" "census_cis PERNAME1,PERNAME2" \
  "pv_inventors raw_inventor_name_first,raw_inventor_name_last"; do
  PYTHONPATH=$1 nice -n 5 /work/main/.venv/bin/python /work/wt-strata46/bench/results/er_real_experiments/stop46_twocol.py $spec $2 >> $3 2>>$3.err
done

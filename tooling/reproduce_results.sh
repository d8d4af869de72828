#!/usr/bin/env bash
# The paper's comparisons on a 2-core CPU (docs/results/README.md has the figures of one run):
# RNNsearch beats RNNencdec trained the same way, its lead grows with sentence length (Canadian
# Hansards at the paper's word level), its soft alignments beat the diagonal (AER), and it beats
# fairseq's lstm on Multi30k En->Fr over three seeds after equal tuning trials on dev.
#
#   MULTI30K_DIR=../shared/data/multi30k HANSARDS_DIR=../shared/data/hansards \
#     bash tooling/reproduce_results.sh              # all stages, about 6 hours
#   bash tooling/reproduce_results.sh hansards     # one stage (they run in this order)
#
# Stages, each of which fits in a 3-hour working session (a training interrupted mid-stage
# resumes from its checkpoint_last.pt, and --stop-time-hours counts the time it already had; a
# finished one is not run again):
#   prepare            Multi30k (sentencepiece) and the Hansards at word level: 30,000-word
#                      shortlists per language, training pairs of up to 50 words
#   hansards           RNNsearch-50 and RNNencdec-50 (rnnsearch_small, rnnencdec_small), the same
#                      recipe (HANSARDS_OPTIONS), HANSARDS_MINUTES each (default 125)
#   hansards-evaluate  Table 1 (All, No UNK), Figure 2, Appendix C, Figure 3, AER
#   multi30k-dropout, multi30k-rate
#                      the tuning trials on dev, the same for RNNsearch and the lstm
#   multi30k-seeds     the chosen settings with seeds 2 and 3 (seed 1 is the trial itself)
#   multi30k-pair      RNNencdec with RNNsearch's chosen options; RNNsearch with B.2's recipe
#   multi30k-evaluate  test_2016 and test_2017 for every Multi30k system
#   multi30k-directions
#                      the quickstart's recipe as it is (its 2,000 updates too) En->Fr and Fr->En,
#                      one core each, at most DIRECTION_MINUTES each (default 60), evaluated on
#                      test_2016 and test_2017
#   hansards-fr-en     RNNsearch-50 Fr->En at the paper's word level, as the hansards stage trains
#                      it En->Fr (HANSARDS_OPTIONS, HANSARDS_MINUTES), evaluated like it, heatmaps
#   hansards-alignment the model as a word aligner (not the paper's), in one session on both cores:
#                      eflomal's and fast_align's links, RNNsearch-50's attention (each direction,
#                      argmax, threshold, symmetrised), RNNsearch-50 En->Fr trained toward eflomal's
#                      links (guided alignment) and with an alignment head trained jointly
#                      (HANSARDS_MINUTES each), and alignment heads added to the finished models and
#                      trained alone, their translation frozen (HEAD_MINUTES each, default 20), all
#                      scored on the gold, with BLEU and rnnsearch-align's time; it trains
#                      RNNsearch-50 in each direction as the hansards and hansards-fr-en stages do
#                      where they have not
#   publish            docs/results from WORK/report (tooling/publish_results.py)
# Every model trains on one thread pinned to one core, two at a time (one per core), with the
# quickstart's recipe (configs/quickstart.yaml: rnnsearch_small, Adam at a fixed rate, clipping,
# chunked_cross_entropy and --amp, its batch size and validation interval) for its stage's
# minutes, each stage changing what it compares (B.2's Adadelta in multi30k-pair), and is
# evaluated at its best validation loss with beam BEAM. --amp: bfloat16 products where the
# processor has them (AMP=0: float32); fairseq's lstm trains in float32 (fairseq's --amp does
# nothing on a CPU) with cross_entropy.
# Environment: WORK (default work/results), RESULTS (default docs/results), MINUTES (Multi30k,
# default 20), HANSARDS_MINUTES, HEAD_MINUTES, BEAM (default 5), AMP, MULTI30K_DIR, HANSARDS_DIR,
# ALIGNMENT_GOLD_DIR (default beside HANSARDS_DIR), SETUP (0: skip scripts/setup.sh, for an
# environment already set up).
set -euo pipefail
cd "$(dirname "$0")/.."
STAGES=(prepare hansards hansards-evaluate multi30k-dropout multi30k-rate multi30k-seeds multi30k-pair multi30k-evaluate
        multi30k-directions hansards-fr-en hansards-alignment publish)
for stage in "$@"; do
  [[ " ${STAGES[*]} " == *" $stage "* ]] || { echo "reproduce_results.sh: error: unknown stage '$stage' (stages: ${STAGES[*]})" >&2; exit 2; }
done
[[ "${SETUP:-1}" == 0 ]] || bash scripts/setup.sh
source scripts/activate.sh
WORK=${WORK:-work/results}
RESULTS=${RESULTS:-docs/results}
MINUTES=${MINUTES:-20}
HANSARDS_MINUTES=${HANSARDS_MINUTES:-125}
DIRECTION_MINUTES=${DIRECTION_MINUTES:-60}
HEAD_MINUTES=${HEAD_MINUTES:-20}
BEAM=${BEAM:-5}
HANSARDS_DIR=${HANSARDS_DIR:-../shared/data/hansards}
GOLD=${ALIGNMENT_GOLD_DIR:-$(dirname "$HANSARDS_DIR")/alignment-gold}
RECIPE=configs/quickstart.yaml  # the recipe every training starts from (scripts/recipe.py)
AMP_ON=false
[[ "${AMP:-1}" == 1 ]] && AMP_ON=true
# B.2: Adadelta (rho 0.95, eps 1e-6, lr 1), gradients rescaled to norm 1, 80 sentences a batch, loss per sentence
PAPER_RECIPE=(--optimizer rnnsearch_adadelta --adadelta-rho 0.95 --adadelta-eps 1e-6 --lr 1.0 --lr-scheduler fixed
              --clip-norm 1.0 --batch-size 80 --sentence-avg)
# The Hansards pair shares one setting, fixed beforehand: the quickstart's recipe (Adam's fixed
# rate) without dropout (two hours are about two epochs of 624,293 pairs for models of 256 units,
# too little to overfit)
HANSARDS_OPTIONS=(--dropout 0)
# The Hansards as every stage prepares them (after -s/-t and before --out): the paper's word level
HANSARDS_DATA=(--scheme word --shortlist 30000 --max-len 50 --local-dir "$HANSARDS_DIR")
# The soft alignments' thresholds rnnsearch-aer scores on the Hansards gold (a row each; the best
# row is chosen on these 37 sentences, the only gold here)
THRESHOLDS=(0.1 0.2 0.3 0.4 0.5)
# Multi30k tuning trials on dev, the same option strings for RNNsearch and the lstm: three
# dropout settings (embeddings and outputs; encoder outputs = annotations) at the recipe's fixed
# rate (FIXED_RATE), then three rates and schedules with the better dropout
# (reduce_lr_on_plateau halves the rate at each epoch's end where the dev loss did not improve)
DROPOUT_TRIALS=("--dropout 0.3 --encoder-dropout-out 0.3" "--dropout 0.5 --encoder-dropout-out 0.5"
                "--dropout 0.5 --encoder-dropout-out 0.3 --decoder-dropout-out 0.3")
RATE_TRIALS=("--lr 0.003 --lr-scheduler reduce_lr_on_plateau --lr-shrink 0.5 --lr-patience 0"
             "--lr 0.002 --lr-scheduler reduce_lr_on_plateau --lr-shrink 0.5 --lr-patience 0"
             "--lr 0.003 --lr-scheduler fixed")
FIXED_RATE="--lr $(python scripts/recipe.py "$RECIPE" --get optimization.lr) --lr-scheduler $(python scripts/recipe.py "$RECIPE" --get lr_scheduler._name)"
# fairseq's lstm at our small sizes (256), attention over a bidirectional encoder
LSTM_OPTIONS=$(python -c 'import sys; sys.path.insert(0, "tooling"); from benchmarking.variants import lstm_options; print(*lstm_options())')
read -ra LSTM <<< "$LSTM_OPTIONS"

log() { echo "| $(date -u +%H:%M:%S) $*"; }

# pair CORPUS: the source and target language of the prepared folder WORK/CORPUS (its manifest,
# else its fairseq files; En->Fr for a folder that names neither, as the first prepared folders)
pair() {
  python -c 'import sys; from pathlib import Path; from rnnsearch_plugin.hub import data_pair
from rnnsearch_plugin.data.languages import DEFAULT_PAIR
print(*(data_pair(Path(sys.argv[1])) or DEFAULT_PAIR))' "$WORK/$1/bin"
}

# on_core CORE COMMAND...: one thread, pinned to CORE, wall time appended to $WORK/wall_times.tsv
on_core() {
  local core=$1 start; shift
  start=$(date +%s)
  OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 taskset -c "$core" "$@"
  printf '%s\t%s\t%d\n' "$(basename "$1")" "${*: -1}" "$(( $(date +%s) - start ))" >> "$WORK/wall_times.tsv"
}

# train CORE CORPUS NAME MINUTES [KEY=VALUE...] [FAIRSEQ_OPTIONS...]: the quickstart's recipe for
# MINUTES of training (counted over restarts: a folder with a checkpoint_last.pt resumes; one whose
# log says the run finished is left as it is, so that a stage run again trains only what it has
# not finished) rather than its updates, logged every 100 updates, with the overrides (KEY=VALUE,
# e.g. optimization.max_update=2000) and the options (each in the place of the recipe's option of
# that name: scripts/recipe.py), best checkpoint by validation loss. fairseq's lstm trains in
# float32 with cross_entropy (our models' chunked_cross_entropy: the same loss without the B x T
# x vocabulary tensors, which the lstm's output layer has too).
train() {
  local core=$1 corpus=$2 name=$3 minutes=$4; shift 4
  local dir=$WORK/checkpoints/$corpus/$name overrides=()
  local run=(optimization.max_update=null common.log_format=null common.log_interval=100 "common.amp=$AMP_ON")
  [[ " $* " == *" --arch lstm "* ]] && run+=(common.amp=false criterion._name=cross_entropy)
  while [[ $# -gt 0 && $1 != -* ]]; do overrides+=("$1"); shift; done
  if grep -qs "^done training in" "$dir/train.log"; then
    log "$name on $corpus has finished ($dir/train.log): not run again (move the folder away to rerun it)"
    return
  fi
  local langs options
  read -ra langs <<< "$(pair "$corpus")"
  options=$(python scripts/recipe.py "$RECIPE" "${run[@]}" "${overrides[@]}" -- "$@")
  mapfile -t options <<< "$options"
  mkdir -p "$dir"
  log "training $name on $corpus (core $core, $minutes minutes): $dir/train.log"
  on_core "$core" fairseq-train "$WORK/$corpus/bin" --user-dir rnnsearch_plugin -s "${langs[0]}" -t "${langs[1]}" "${options[@]}" \
    --stop-time-hours "$(python -c "print($minutes / 60)")" --save-dir "$dir" --log-file "$dir/train.log" > /dev/null
}

# wait_jobs: wait for every background job, then fail (set -e) if one of them failed
wait_jobs() {
  local pid failed=0
  for pid in $(jobs -p); do wait "$pid" || failed=1; done
  return "$failed"
}

checkpoint() { echo "$WORK/checkpoints/$1/$2/checkpoint_best.pt"; }

# evaluate CORE CORPUS SPLIT NAME...: rnnsearch-evaluate of the named systems into $WORK/report/CORPUS.SPLIT
# (REPORT=OTHER.SPLIT: into $WORK/report/OTHER.SPLIT)
evaluate() {
  local core=$1 corpus=$2 split=$3; shift 3
  local report=${REPORT:-$corpus}.$split
  local args=() name
  for name in "$@"; do
    args+=(--system "$name=$(checkpoint "$corpus" "$name")" --train-log "$name=$WORK/checkpoints/$corpus/$name/train.log")
  done
  log "evaluating $* on $corpus $split (core $core)"
  on_core "$core" rnnsearch-evaluate --prepared "$WORK/$corpus" --split "$split" --beam "$BEAM" --lowercase \
    "${args[@]}" --out "$WORK/report/$report"
}

# heatmaps CORE CORPUS NAME: Figure 3, the first three test sentences, into $WORK/report/CORPUS.alignments
heatmaps() {
  local langs
  read -ra langs <<< "$(pair "$2")"
  on_core "$1" rnnsearch-heatmaps --path "$(checkpoint "$2" "$3")" --data "$WORK/$2/bin" \
    --input "$WORK/$2/raw/test.${langs[0]}" --ids 0,1,2 --beam "$BEAM" --out "$WORK/report/$2.alignments"
}

stage_prepare() {
  python scripts/prepare_data.py multi30k --scheme spm --out "$WORK/multi30k"
  python scripts/prepare_data.py hansards "${HANSARDS_DATA[@]}" --out "$WORK/hansards"
}
stage_hansards() {
  train 0 hansards rnnsearch_small "$HANSARDS_MINUTES" --arch rnnsearch_small "${HANSARDS_OPTIONS[@]}" &
  train 1 hansards rnnencdec_small "$HANSARDS_MINUTES" --arch rnnencdec_small "${HANSARDS_OPTIONS[@]}" &
  wait_jobs
}
stage_hansards_evaluate() {
  evaluate 0 hansards test rnnsearch_small rnnencdec_small &
  {
    heatmaps 1 hansards rnnsearch_small
    on_core 1 rnnsearch-aer --path "$(checkpoint hansards rnnsearch_small)" --data "$WORK/hansards/bin" --gold "$GOLD" \
      --out "$WORK/report/hansards.aer"
  } &
  wait_jobs
}

# arch_options MODEL: the architecture options of rnnsearch_small, rnnencdec_small or lstm
arch_options() {
  case $1 in
    lstm) echo "${LSTM[*]}" ;;
    *) echo "--arch $1" ;;
  esac
}

# trial CORE MODEL NUMBER DROPOUT RATE: tuning trial NUMBER of MODEL on Multi30k (the recipe's seed, 1); the
# folder keeps its dropout and rate options for the stages that pick the best trial
trial() {
  local core=$1 model=$2 number=$3 dropout=$4 rate=$5 dir=$WORK/checkpoints/multi30k/$2.t$3
  mkdir -p "$dir"
  echo "$dropout" > "$dir/dropout.txt"
  echo "$rate" > "$dir/rate.txt"
  # shellcheck disable=SC2046,SC2086  # the option strings split into words on purpose
  train "$core" multi30k "$model.t$number" "$MINUTES" $(arch_options "$model") $dropout $rate
}

# best MODEL LAST: the folder of MODEL's trial, 1 to LAST, with the lowest validation loss
best() {
  local folders=() n
  for n in $(seq 1 "$2"); do folders+=("$WORK/checkpoints/multi30k/$1.t$n"); done
  python tooling/best_trial.py "${folders[@]}"
}

# seed CORE MODEL SEED: MODEL's chosen trial (MODEL.seed1) again with another seed, as MODEL.seedSEED
seed() {
  local options
  options=$(cat "$WORK/checkpoints/multi30k/$2.seed1/dropout.txt" "$WORK/checkpoints/multi30k/$2.seed1/rate.txt")
  # shellcheck disable=SC2046,SC2086
  train "$1" multi30k "$2.seed$3" "$MINUTES" $(arch_options "$2") $options --seed "$3"
}

# Each command substitution below is an assignment of its own, so that its failure stops the script.
stage_multi30k_dropout() {
  local n
  for n in 1 2 3; do
    trial 0 rnnsearch_small "$n" "${DROPOUT_TRIALS[$n - 1]}" "$FIXED_RATE" &
    trial 1 lstm "$n" "${DROPOUT_TRIALS[$n - 1]}" "$FIXED_RATE" &
    wait_jobs
  done
}
stage_multi30k_rate() {  # trials 4-6: each model's better dropout of trials 1-3 with RATE_TRIALS
  local n chosen search_dropout lstm_dropout
  chosen=$(best rnnsearch_small 3)
  search_dropout=$(cat "$chosen/dropout.txt")
  chosen=$(best lstm 3)
  lstm_dropout=$(cat "$chosen/dropout.txt")
  for n in 4 5 6; do
    trial 0 rnnsearch_small "$n" "$search_dropout" "${RATE_TRIALS[$n - 4]}" &
    trial 1 lstm "$n" "$lstm_dropout" "${RATE_TRIALS[$n - 4]}" &
    wait_jobs
  done
}
stage_multi30k_seeds() {  # MODEL.seed1 = MODEL's best of the six trials, then seeds 2 and 3
  local n model chosen
  for model in rnnsearch_small lstm; do
    chosen=$(best "$model" 6)
    ln -sfn "$(basename "$chosen")" "$WORK/checkpoints/multi30k/$model.seed1"
  done
  for n in 2 3; do
    seed 0 rnnsearch_small "$n" &
    seed 1 lstm "$n" &
    wait_jobs
  done
}
# RNNencdec with RNNsearch's chosen options (there is no dropout on its single context vector:
# --encoder-dropout-out is RNNsearch's annotations), and RNNsearch's chosen model options trained
# with B.2's recipe instead of Adam
stage_multi30k_pair() {
  local chosen=$WORK/checkpoints/multi30k/rnnsearch_small.seed1 dropout encdec_dropout rate
  [[ -e "$chosen" ]] || { echo "reproduce_results.sh: error: no $chosen: run the multi30k-seeds stage first" >&2; exit 1; }
  dropout=$(cat "$chosen/dropout.txt")
  encdec_dropout=$(sed -E 's/--encoder-dropout-out [0-9.]+ ?//' "$chosen/dropout.txt")
  rate=$(cat "$chosen/rate.txt")
  # shellcheck disable=SC2086
  train 0 multi30k rnnencdec_small "$MINUTES" --arch rnnencdec_small $encdec_dropout $rate &
  # shellcheck disable=SC2086
  train 1 multi30k rnnsearch_small.b2 "$MINUTES" --arch rnnsearch_small "${PAPER_RECIPE[@]}" $dropout &
  wait_jobs
}
stage_multi30k_evaluate() {
  local systems=(rnnsearch_small.seed{1,2,3} lstm.seed{1,2,3} rnnencdec_small rnnsearch_small.b2)
  evaluate 0 multi30k test "${systems[@]}" &
  evaluate 1 multi30k test1 "${systems[@]}" &
  wait_jobs
}
# The quickstart's recipe (scripts/quickstart.sh), its updates too, in each direction of Multi30k, one core each
stage_multi30k_directions() {
  local updates
  updates=optimization.max_update=$(python scripts/recipe.py "$RECIPE" --get optimization.max_update)
  [[ -e "$WORK/multi30k/bin" ]] || python scripts/prepare_data.py multi30k --scheme spm --out "$WORK/multi30k"
  python scripts/prepare_data.py multi30k -s fr -t en --scheme spm --out "$WORK/multi30k.fr-en"
  train 0 multi30k quickstart "$DIRECTION_MINUTES" "$updates" &
  train 1 multi30k.fr-en quickstart "$DIRECTION_MINUTES" "$updates" &
  wait_jobs
  local core=0 corpus split
  for corpus in multi30k multi30k.fr-en; do
    for split in test test1; do
      REPORT=directions.$corpus evaluate "$core" "$corpus" "$split" quickstart &
    done
    core=1
  done
  wait_jobs
}
# fr_en_model CORE: RNNsearch-50 Fr->En, trained and evaluated as the hansards stages do En->Fr, with its heatmaps
fr_en_model() {
  python scripts/prepare_data.py hansards -s fr -t en "${HANSARDS_DATA[@]}" --out "$WORK/hansards.fr-en"
  train "$1" hansards.fr-en rnnsearch_small "$HANSARDS_MINUTES" --arch rnnsearch_small "${HANSARDS_OPTIONS[@]}"
  evaluate "$1" hansards.fr-en test rnnsearch_small
  heatmaps "$1" hansards.fr-en rnnsearch_small
}
stage_hansards_fr_en() { fr_en_model 1; }

# The model as a word aligner (not the paper's), everything docs/results/alignment.md reports, in one
# working session: two lanes, one per core, each a chain of one-thread jobs, waiting for the other's
# results where it needs them (await: marker files WORK/lane.*, a trained head's checkpoint). Every
# training is skipped where it has finished, so the stage reads the models of the hansards and
# hansards-fr-en stages where they ran, and trains them (the same recipe, HANSARDS_MINUTES) where they
# did not.
# - Statistical aligners: eflomal, then fast_align's model (tooling/statistical_alignments.py --aligner)
#   align every training pair the models train on with the alignment gold's 37, both directions, and
#   rnnsearch-aer scores each direction and symmetrisation (WORK/report/hansards.align/ALIGNER.*).
# - The attention: rnnsearch-aer scores RNNsearch-50 En->Fr and Fr->En (argmax, THRESHOLDS) and both
#   symmetrised, and tooling/align_load.py times rnnsearch-align on the 3,000 test pairs, both directions.
# - Guided alignment: eflomal's grow-diag-final-and links of every training pair binarised beside them
#   (training_links), and RNNsearch-50 En->Fr trained toward them with --alignment-lambda GUIDED_LAMBDA
#   (default 2, fixed before training: at 0.5 the guidance was a fifth of the loss at the end, 0.5 x
#   1.53 bits a target token beside the translation's 3.06, and took the attention's cross-entropy
#   with the links only from the unguided model's 1.29 nats to 1.15; 2 weighs the two terms equally),
#   its links scored as the unguided model's.
# - The alignment head trained jointly: RNNsearch-50 with a full-context head trained from the start
#   toward the same links (rnnsearch_small.head_joint: --alignment-lambda 1 on the head, the attention
#   left free), HANSARDS_MINUTES; the guided, joint and unguided models evaluated in one report
#   (WORK/report/hansards.guided.test).
# - Heads trained alone (head), one after another on lane 0 (two side by side outgrow 24 GB:
#   docs/training.md, the head's cost): toward eflomal's links (--alignment-lambda 1), by the head's
#   own objective (--alignment-likelihood-lambda 1), toward the links with full context, toward the
#   links for three times as long (does more training close the gap to eflomal?), then the
#   full-context head on RNNsearch-50 Fr->En (toward the Fr->En pairs' links) and the two
#   full-context heads' links symmetrised; each one's links scored as it ends
#   (WORK/report/hansards.head), rnnsearch-align timed with the first, and the model evaluated with and
#   without it (BLEU: the same translations, WORK/report/hansards.head.test).
# Lane 0: RNNsearch-50 En->Fr, the joint head, the En->Fr heads, the Fr->En head, the three models'
# evaluation. Lane 1: the En->Fr training links, the guided model, RNNsearch-50 Fr->En, its training
# links, the statistical aligners, the attention's and the guided model's links, the speed runs, the
# evaluation with the head.
# Estimated from the earlier stages' wall times, lane 0 takes 2 x HANSARDS_MINUTES + 7 x HEAD_MINUTES
# + 20 minutes and lane 1 2 x HANSARDS_MINUTES + 1 hour: with the prepare stage, HANSARDS_MINUTES=35
# HEAD_MINUTES=5 fits a 3-hour session.
stage_hansards_alignment() {
  rm -f "$WORK"/lane.*
  alignment_lane_0 &
  alignment_lane_1 &
  wait_jobs
}

# training_links CORE CORPUS: eflomal's grow-diag-final-and links of every training pair of the prepared
# Hansards WORK/CORPUS (either direction), binarised beside them; WORK/lane.links.CORPUS marks them done
training_links() {
  local langs links
  read -ra langs <<< "$(pair "$2")"
  links=$WORK/$2/train.links.${langs[0]}-${langs[1]}
  [[ -s "$links" ]] || on_core "$1" python tooling/statistical_alignments.py --prepared "$WORK/$2" --training-alignments "$links"
  python scripts/prepare_data.py hansards -s "${langs[0]}" -t "${langs[1]}" "${HANSARDS_DATA[@]}" --out "$WORK/$2" \
    --train-alignments "$links"
  touch "$WORK/lane.links.$2"
}
# await LANE FILE...: wait until every FILE exists, failing (set -e) once lane LANE (0 or 1) has ended without it
await() {
  local lane=$1 file; shift
  for file in "$@"; do
    until [[ -e "$file" ]]; do
      [[ -e "$WORK/lane.$lane.ended" ]] && { echo "reproduce_results.sh: error: lane $lane ended without $file" >&2; exit 1; }
      sleep 5
    done
  done
}

alignment_lane_0() {
  trap 'touch "$WORK/lane.0.ended"' EXIT
  local out=$WORK/report/hansards.head full=(--alignment-head-context full --load-alignments --alignment-lambda 1)
  train 0 hansards rnnsearch_small "$HANSARDS_MINUTES" --arch rnnsearch_small "${HANSARDS_OPTIONS[@]}"
  touch "$WORK/lane.model"
  await 1 "$WORK/lane.links.hansards"
  train 0 hansards rnnsearch_small.head_joint "$HANSARDS_MINUTES" --arch rnnsearch_small "${HANSARDS_OPTIONS[@]}" \
    --alignment-head --alignment-head-context full --load-alignments --alignment-lambda 1
  head_aer 0 hansards rnnsearch_small.head_joint rnnsearch_small.head_joint
  head 0 hansards rnnsearch_small.head_links --load-alignments --alignment-lambda 1
  head_aer 0 hansards rnnsearch_small.head_links rnnsearch_small.head_links
  head 0 hansards rnnsearch_small.head_own --alignment-likelihood-lambda 1
  head_aer 0 hansards rnnsearch_small.head_own rnnsearch_small.head_own
  head 0 hansards rnnsearch_small.head_links_full "${full[@]}"
  head_aer 0 hansards rnnsearch_small.head_links_full rnnsearch_small.head_links_full
  HEAD_MINUTES=$(python -c "print($HEAD_MINUTES * 3)") head 0 hansards rnnsearch_small.head_links_long --load-alignments --alignment-lambda 1
  head_aer 0 hansards rnnsearch_small.head_links_long rnnsearch_small.head_links_long
  await 1 "$WORK/lane.links.hansards.fr-en"
  head 0 hansards.fr-en rnnsearch_small.head_links_full "${full[@]}"
  head_aer 0 hansards.fr-en rnnsearch_small.head_links_full rnnsearch_small.head_links_full.fr-en
  head_aer 0 hansards rnnsearch_small.head_links_full rnnsearch_small.head_links_full.both \
    --reverse-path "$(checkpoint hansards.fr-en rnnsearch_small.head_links_full)" --reverse-data "$WORK/hansards.fr-en/bin"
  await 1 "$WORK/lane.guided"
  REPORT=hansards.guided evaluate 0 hansards test rnnsearch_small rnnsearch_small_guided rnnsearch_small.head_joint
}

alignment_lane_1() {
  trap 'touch "$WORK/lane.1.ended"' EXIT
  local align=$WORK/report/hansards.align head=$WORK/report/hansards.head name aligner
  local reverse=(--reverse-path "$(checkpoint hansards.fr-en rnnsearch_small)" --reverse-data "$WORK/hansards.fr-en/bin")
  training_links 1 hansards
  train 1 hansards rnnsearch_small_guided "$HANSARDS_MINUTES" --arch rnnsearch_small "${HANSARDS_OPTIONS[@]}" \
    --load-alignments --alignment-lambda "${GUIDED_LAMBDA:-2}"
  touch "$WORK/lane.guided"
  fr_en_model 1
  training_links 1 hansards.fr-en
  for aligner in eflomal fast_align; do
    on_core 1 python tooling/statistical_alignments.py --aligner "$aligner" --prepared "$WORK/hansards" --gold "$GOLD" \
      --out "$align/$aligner"
    for name in forward reverse intersect union grow-diag-final-and; do
      on_core 1 rnnsearch-aer --alignments "$align/$aligner/$aligner.$name" --name "$aligner $name" --gold "$GOLD" \
        --out "$align/$aligner.$name"
    done
  done
  await 0 "$WORK/lane.model"
  on_core 1 rnnsearch-aer --path "$(checkpoint hansards rnnsearch_small)" --data "$WORK/hansards/bin" "${reverse[@]}" \
    --gold "$GOLD" --threshold "${THRESHOLDS[@]}" --out "$align/rnnsearch.en-fr"
  on_core 1 rnnsearch-aer --path "$(checkpoint hansards.fr-en rnnsearch_small)" --data "$WORK/hansards.fr-en/bin" \
    --gold "$GOLD" --threshold "${THRESHOLDS[@]}" --out "$align/rnnsearch.fr-en"
  on_core 1 rnnsearch-aer --path "$(checkpoint hansards rnnsearch_small_guided)" --data "$WORK/hansards/bin" "${reverse[@]}" \
    --gold "$GOLD" --threshold "${THRESHOLDS[@]}" --out "$align/rnnsearch.guided.en-fr"
  on_core 1 rnnsearch-aer --path "$(checkpoint hansards rnnsearch_small)" --data "$WORK/hansards/bin" --gold "$GOLD" \
    --threshold "${THRESHOLDS[@]}" --out "$head/rnnsearch_small"
  on_core 1 python tooling/align_load.py --path "$(checkpoint hansards rnnsearch_small)" --data "$WORK/hansards/bin" "${reverse[@]}" \
    --source "$WORK/hansards/word/test.en" --target "$WORK/hansards/word/test.fr" --sizes 3000 --out "$align" --name align_load.test
  await 0 "$(checkpoint hansards rnnsearch_small.head_links)"
  for name in rnnsearch_small rnnsearch_small.head_links; do
    on_core 1 python tooling/align_load.py --path "$(checkpoint hansards "$name")" --data "$WORK/hansards/bin" \
      --source "$WORK/hansards/word/test.en" --target "$WORK/hansards/word/test.fr" --sizes 3000 --out "$head" --name "align_load.$name"
  done
  REPORT=hansards.head evaluate 1 hansards test rnnsearch_small rnnsearch_small.head_links
}

# head CORE CORPUS NAME OPTIONS...: an alignment head on RNNsearch-50 of WORK/CORPUS, trained alone for
# HEAD_MINUTES with the hansards options and OPTIONS (its objective), as WORK/checkpoints/CORPUS/NAME;
# unvalidated (the dev loss is the translation's, which the head leaves as it is), its checkpoint_best.pt
# the last, linked once it has trained. fairseq's --finetune-from-model carries the model's own training
# time into the new run, which --stop-time-hours counts: the head's budget is given on top of the model's.
head() {
  local core=$1 corpus=$2 name=$3 minutes; shift 3
  minutes=$(python -c 'import sys; from pathlib import Path; from rnnsearch_plugin.analysis.training_log import read_training_log
print(read_training_log(Path(sys.argv[1]))["wall_hours"] * 60 + float(sys.argv[2]))' "$WORK/checkpoints/$corpus/rnnsearch_small/train.log" "$HEAD_MINUTES")
  train "$core" "$corpus" "$name" "$minutes" --arch rnnsearch_small "${HANSARDS_OPTIONS[@]}" \
    --finetune-from-model "$(checkpoint "$corpus" rnnsearch_small)" --alignment-head --train-alignment-head-only \
    --disable-validation "$@"
  ln -sfn checkpoint_last.pt "$WORK/checkpoints/$corpus/$name/checkpoint_best.pt"
}
# head_aer CORE CORPUS NAME REPORT [OPTIONS...]: the links of WORK/checkpoints/CORPUS/NAME on the gold (argmax,
# thresholds; OPTIONS: a reverse model's, symmetrised), into WORK/report/hansards.head/REPORT
head_aer() {
  on_core "$1" rnnsearch-aer --path "$(checkpoint "$2" "$3")" --data "$WORK/$2/bin" --gold "$GOLD" \
    --threshold "${THRESHOLDS[@]}" --out "$WORK/report/hansards.head/$4" "${@:5}"
}
stage_publish() {
  python tooling/publish_results.py --work "$WORK" --out "$RESULTS"
}

# machine STAGE: the processor a stage ran on, and the instruction sets that matter for its speed
machine() {
  printf '%s\t%s\n' "$1" "$(python tooling/machine.py)" >> "$WORK/machines.tsv"
}

mkdir -p "$WORK"
for stage in "${@:-${STAGES[@]}}"; do
  log "stage $stage"
  machine "$stage"
  "stage_${stage//-/_}"
done

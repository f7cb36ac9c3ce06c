#!/usr/bin/env bash
# Measuring on a lent server that has no Rust toolchain: `prepare` (here) builds the suite's
# binary and puts it, the peers script and this script into DIR (default .device, which must be
# ignored by git, e.g. listed in .git/info/exclude); `measure` (there, from the repository root,
# with DIR carried) records the host, runs the suite on THREADS threads and then the peers
# (numpy, PyTorch, torch.compile, JAX) on the same kernels, each under a time limit so that one
# call returns everything even when a part overruns. Loans can end after the first call: put
# everything that belongs together into that one.
#
#   bash benches/device.sh prepare [DIR]
#   bash DIR/device.sh measure [DIR] [THREADS] [KERNELS]     (writes into $OUT, else DIR/out)
set -euo pipefail

mode=${1:-}
dir=${2:-.device}

case "$mode" in
prepare)
    mkdir -p "$dir"
    # The last line cargo prints names the executable.
    binary=$(cargo bench --bench kernels --no-run 2>&1 | sed -n 's/.*Executable .*(\(.*\))$/\1/p' | tail -1)
    if [ -z "$binary" ]; then
        echo "cannot find the benchmark executable in cargo's output" >&2
        exit 1
    fi
    cp "$binary" "$dir/kernels"
    strip "$dir/kernels" 2>/dev/null || true
    cp "$(dirname "$0")/device.sh" "$dir/device.sh"
    if [ -f ../shared/bench/peers.py ]; then
        cp ../shared/bench/peers.py "$dir/peers.py"
    else
        echo "no ../shared/bench/peers.py: the peers will not run" >&2
    fi
    ls -l "$dir"
    ;;
measure)
    threads=${3:-16}
    kernels=${4:-matmul-f32,matmul-f64,batched-matmul,chain,attention,mri-q,softmax,layernorm,stencil-3d,hotspot,kmeans-assign,sum-of-squares,stream-triad,transpose-add,matvec}
    out=${OUT:-$dir/out}
    mkdir -p "$out"
    { lscpu | grep -E 'Model name|^CPU\(s\)|Thread|Core|Socket|NUMA node|L3' || true; nproc; free -g | head -2; } > "$out/host.txt" 2>&1
    # Each part under its own limit (seconds), so a slow one cannot take the others' output.
    timeout 200 "$dir/kernels" --threads "$threads" --filter "$kernels" --out "$out/suite" > "$out/suite.txt" 2>&1 \
        || echo "suite: exit $?" >> "$out/suite.txt"
    if [ -f "$dir/peers.py" ]; then
        PYTHONUNBUFFERED=1 timeout 270 python3 "$dir/peers.py" --threads "$threads" > "$out/peers.jsonl" 2> "$out/peers.err" \
            || echo "peers: exit $?" >> "$out/peers.err"
    fi
    cat "$out/host.txt"
    grep -v '^  ' "$out/suite.txt" | tail -n 120
    cat "$out/peers.jsonl" 2>/dev/null || true
    ;;
*)
    echo "usage: bash benches/device.sh prepare [DIR] | bash DIR/device.sh measure [DIR] [THREADS] [KERNELS]" >&2
    exit 2
    ;;
esac

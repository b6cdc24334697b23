# third and fourth device commands (same machine): l2_probe/g36c.sh, first with the probe picking kernels
# by e.name.startswith("nvfuser") (no event matched: l2_probe/first_attempt/), then with the probe as kept here
source .gpu/activate.sh && unset PYTHONDONTWRITEBYTECODE; T0=$(date +%s); timeout 400 bash .probe/g36c.sh; echo "l2 done at $(( $(date +%s) - T0 ))"; grep -v -i warn $OUT/l2.err | head -12
# printed: {'sync': 19768, 'sync_spin20': 19768, 'sync_spin200': 19744, 'clean': 16241} for stablelm_6, ... ; l2 done at 23

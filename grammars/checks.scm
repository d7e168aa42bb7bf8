; check_input_N: `if (arg0_1_size[0] < 2) { ... }`, `if (8 != arg0_1_size[1]) { ... }`,
; and the gate `if (!_check_aoti_runtime_check_inputs_env()){ return; }`.
(if_statement
  condition: (condition_clause value: (_) @condition)
  consequence: (_) @consequence) @if

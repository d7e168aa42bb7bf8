; The AOTI_RUNTIME_CHECK_INPUTS gate in run_impl: the input asserts run only when it is set:
;   `if (_check_aoti_runtime_check_inputs_env()) { assert_size_stride(arg0_1, {s77, 8L}, ...); }`
; (The gate at the top of __check_inputs_outputs, `if (!_check_aoti_runtime_check_inputs_env()){ return; }`,
; is ts.skips_unless_checking.)
(if_statement
  condition: (condition_clause
    value: (call_expression function: (identifier) @env))
  (#eq? @env "_check_aoti_runtime_check_inputs_env")) @only_if_set

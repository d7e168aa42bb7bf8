; Function definitions anywhere in a C++ member: the AOTI wrapper's constructor, run_impl,
; check_input_N, __check_inputs_outputs, call_triton_<kernel> helpers (inside template
; declarations) and extern "C" cpp_fused_<kernel> kernels (inside linkage specifications).
(function_definition
  declarator: (function_declarator
    declarator: (_) @name
    parameters: (parameter_list) @params)
  body: (compound_statement) @body) @function

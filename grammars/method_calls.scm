; Argument-less method calls on a named object: `buf3.data_ptr()`, `arg0_1.get()` (the tensor a
; shim-call argument passes).
(call_expression
  function: (field_expression
    argument: (identifier) @object
    operator: "."
    field: (field_identifier) @method)
  arguments: (argument_list) @args) @call

; `int64_t s77 = arg0_1_size[0];`, `auto tmp5 = tmp4 ? tmp3 : tmp0;`, `auto buf2 = std::move(buf0);`,
; `RAIIAtenTensorHandle buf0(buf0_handle);` (value is then an argument_list).
(declaration
  type: (_) @type
  declarator: (init_declarator
    declarator: (identifier) @name
    value: (_) @value)) @declaration

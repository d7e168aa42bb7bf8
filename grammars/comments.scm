; Comments: `// Topologically Sorted Source Nodes: [...]` before launches and the
; `/* async_compile.triton('<name>', '''...''', device_str='cuda') */` Triton source in helpers.
(comment) @comment

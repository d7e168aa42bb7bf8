"""The linking pass over run_impl's calls: each launch of a generated kernel or extern (shim)
call, the buffers it reads and writes (through aliases), and which launches produce each buffer."""

from __future__ import annotations

from ..core.budget import poll
from ..core.model import Launch
from .context import LinkContext

_POINTERS = ("in_ptr", "out_ptr", "in_out_ptr")


def link_launches(ctx: LinkContext) -> None:
    """`model.launches` in call order, with `ctx.launch_inputs` and `ctx.producers` beside them."""
    helpers = ctx.wrapper.helpers
    for call in ctx.wrapper.calls:
        poll("linking kernel launches")
        fn = call.function
        kernel = None
        params: tuple[str, ...] = ()
        if fn in helpers:
            kernel = fn[len("call_"):]
            params = helpers[fn].params
        elif fn in ctx.kfacts:
            kernel = fn
            params = ctx.kfacts[fn].params
        elif fn.startswith(("cpp_fused_", "cpp_kernel_", "triton_")):
            kernel = fn  # a generated kernel whose source is missing: still a launch
        if kernel is not None:
            launch = Launch(kernel=kernel, args=call.args, location=call.location, comment=call.comment)
            outputs, inputs = [], set()
            for i, param in enumerate(params):  # only pointers name buffers (resolved alone)
                arg_name = call.arg_names[i] if i < len(call.arg_names) else None
                if not param.startswith(_POINTERS) or arg_name is None:
                    continue
                buf = ctx.canonical(arg_name)
                if param.startswith("out_ptr") or param.startswith("in_out_ptr"):
                    outputs.append(buf)
                if param.startswith("in_ptr") or param.startswith("in_out_ptr"):
                    inputs.add(buf)
            launch.outputs = tuple(outputs)
        else:
            if "empty_strided" in fn:
                continue
            outputs = [ctx.canonical(o) for o in call.outputs]
            inputs = {ctx.canonical(n) for n in call.arg_names if n and n not in call.outputs}
            if not outputs and call.checked:
                continue
            launch = Launch(kernel=fn, args=call.args, location=call.location, comment=call.comment,
                            extern=True, outputs=tuple(outputs), error_checked=call.checked)
        index = len(ctx.model.launches)
        ctx.model.launches.append(launch)
        ctx.launch_inputs.append(inputs)
        for out in launch.outputs:
            ctx.producers[out].append(index)

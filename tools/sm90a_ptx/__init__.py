"""The sm_90a kernel generator's parts (tools/gen_sm90a.py is its command line).

One module a concern, in dependency order: flags (switches and fixed sizes), kstate (the
kernel being emitted, read as K.NAME), timeline, instances, layout, sync, watch (the watchdog's watcher), convert, walk,
fused, transform, prep, selffill, xconv, docs, wprepared, streamk, epilogue, consumer,
kernel (emit_kernel: one instantiation, every role).  Each module imports only from modules
before it.
"""

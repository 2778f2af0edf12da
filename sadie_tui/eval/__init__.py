"""The retrieval benchmarks behind ``sadie eval``: LoCoMo (``locomo``) and the demo memory's
own questions (``demo``). They drive the engine; the engine never imports them."""

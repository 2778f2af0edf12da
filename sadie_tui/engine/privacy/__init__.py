"""Privacy at rest: unlocking an encrypted memory (``unlock``), converting a memory to an
encrypted one or changing its passphrase (``convert``), and backing it up and restoring it
whole (``backup``)."""

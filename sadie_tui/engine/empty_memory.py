"""What sadie says when the memory is empty: that it is, and the three ways to fill it.

One wording for every face: the app's start screen and status line, a chat reply (the
offline one in full; a status line before a model's), `--ask` (a notice beside the answer
the spec fixes) and `sadie search`.
"""

from __future__ import annotations

#: The one line: a notice, a status, stderr.
FILL_NOTICE = (
    "the memory is empty: fill it with `sadie ingest PATH`, or list folders the app keeps"
    ' current as `notes = ["~/notes"]` in config.toml, or try the demo: `sadie --demo`'
)

#: The offline reply on an empty memory.
EMPTY_REPLY = (
    "Your memory is empty, so I have none of your notes to answer from yet. Fill it with "
    "`sadie ingest PATH` (a folder of notes, a journal export, a calendar, a CSV), or list "
    'the folders I should keep current as `notes = ["~/notes"]` in config.toml. To try '
    "everything first, `sadie --demo` opens a year of an invented life."
)

#: The app's start screen on an empty memory: the ways, one a line (each fits 60 columns).
WELCOME = (
    "Your memory is empty, so sadie has none of your notes to answer from yet. Fill it:\n\n"
    "• sadie ingest ~/notes: read a folder of notes\n"
    '• notes = ["~/notes"] in config.toml: kept current\n'
    "• sadie --demo: try it all on an invented life\n\n"
    "f1 help · ctrl+l past conversations"
)

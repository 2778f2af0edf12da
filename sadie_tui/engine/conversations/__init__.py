"""Conversations and their messages, as the engine and the faces use them.

A conversation holds a title, a short summary, sadie's current emotion, the persona, a pinned
flag and an archived timestamp. Every function that takes a conversation id also accepts a
unique prefix of at least four characters, as printed by ``sadie conversations list``.
The SQL is ``store.conversations``'s; this package is the facade whose names callers import:

- ``lifecycle``: create, get, list, rename, pin, archive, set state, forget;
- ``message_log``: add, update and read messages;
- ``summary``: the summary from the first exchange;
- ``exchange``: Markdown / JSON export and JSON import;
- ``export_format``: an export file read and checked, field by field, before an import;
- ``shown``: a conversation with its messages and chips, as `show --json` prints it.
"""

from __future__ import annotations

from ..store.conversations import Conversation, Message, resolve_id
from ..store.ids import MIN_PREFIX, AmbiguousIdError, new_id, now, resolve_prefix
from .exchange import (
    EXPORT_FORMAT,
    EXPORT_VERSION,
    citation_line,
    export,
    import_json,
    support_label,
)
from .export_format import MAX_EXPORT_BYTES, decode_export, too_large
from .lifecycle import (
    archive,
    create_conversation,
    forget,
    get_conversation,
    list_conversations,
    pin,
    rename,
    set_state,
)
from .message_log import (
    HISTORY_STATUSES,
    ROLES,
    STATUSES,
    add_message,
    count_messages,
    get_message,
    last_exchange,
    messages,
    recent_messages,
    supersede,
    update_message,
)
from .shown import ConversationShow
from .summary import SUMMARY_LIMIT, summary_from_first_exchange

__all__ = [
    "EXPORT_FORMAT",
    "EXPORT_VERSION",
    "HISTORY_STATUSES",
    "MIN_PREFIX",
    "ROLES",
    "STATUSES",
    "SUMMARY_LIMIT",
    "AmbiguousIdError",
    "Conversation",
    "ConversationShow",
    "Message",
    "add_message",
    "archive",
    "citation_line",
    "decode_export",
    "MAX_EXPORT_BYTES",
    "too_large",
    "count_messages",
    "create_conversation",
    "export",
    "forget",
    "get_conversation",
    "get_message",
    "import_json",
    "last_exchange",
    "list_conversations",
    "messages",
    "new_id",
    "now",
    "pin",
    "recent_messages",
    "rename",
    "resolve_id",
    "resolve_prefix",
    "set_state",
    "summary_from_first_exchange",
    "supersede",
    "support_label",
    "update_message",
]

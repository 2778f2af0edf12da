"""The two kinds of turn: a chat turn (``chat.ChatTurn``: prepare, brief, stream, check,
persist) and an ask (``ask.run_ask``: the persona's stages), sharing the briefing builder
(``prompt``) and the grounding helpers (``common``, ``..reply.grounding``)."""

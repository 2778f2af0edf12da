"""The reply's room: everything between the model's tokens and what is kept.

``check`` is its one door, and the only module of the room the turns import: ``Filtered``
while the reply streams, then the reply read, its citations passed and settled, and kept
(``Checked.kept``) or weighed (``Checked.weighed``). Behind it: ``filtered`` (the reply
read), ``score`` (the grounding score and report), ``stream_filter`` (thinking
dropped, the citations tail diverted), ``guard`` (echoed headers and instructions hidden,
loops cut), ``near_echo`` (paraphrased instructions taken out of a finished reply),
``citations`` (the tail parsed, policed, graded), ``grounding`` (the citation pass, sadie's
own sentence matches, settling), ``backing`` (each citation attached to the sentence it
supports), ``claims`` (support means the claim), ``closeness`` (a paraphrase near its note),
``unsupported`` (details no source holds). Pure, apart from the citation pass's one request
to the reasoner.
"""

"""The reply's readers and checks: everything between the model's tokens and what is shown.

``stream_filter`` (thinking dropped, the citations tail diverted), ``guard`` (echoed
headers and instructions hidden, loops cut), ``near_echo`` (paraphrased instructions taken
out of a finished reply), ``citations`` (the tail parsed, grounded, graded), ``grounding``
(the citation pass, sadie's own sentence matches), ``unsupported`` (details no source
holds), ``backing`` (each citation attached to the sentence it supports). Pure, apart from
the citation pass's one request to the reasoner.
"""

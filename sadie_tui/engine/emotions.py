"""Emotions: the seven registers sadie's tone moves across, and how one is chosen.

This module owns the register map (spec: "Seven emotional registers"): the names, the
sigil glyph and colour each is drawn with, the one-line meaning shown on the help screen,
and the tone instruction told to the model. It also owns the choice itself: a register is
picked per reply from the content of the *person's* message, before generating.

The choice combines two signals:

- **cues**: weighted regular expressions per register ("got the job", "!!" lean
  celebrating; "diagnosed", "hospital" lean serious; "remember when" leans reflective ...).
  Most messages are questions, so cues read what a question is *about* ("how did I feel"
  leans reflective, "cried" serious, "what should I do" focused, "am I getting better"
  encouraging). The form of a question ("?", a "what/when/how" opener) is only a small
  nudge toward curious, and only when no other register has a cue (``QUESTION_FORM``);
- **embeddings**: cosine similarity of the message to each register's centroid, the
  normalised mean of that register's ``PROTOTYPES`` and ``EXEMPLARS`` sentences under the
  project's sentence embedder (centroids beat nearest-prototype scoring in leave-one-out
  checks). They are embedded once, lazily, and cached on the classifier.

A register's score is its centroid similarity plus ``CUE_WEIGHT`` times its summed cue
weight. With ``allow_load=False`` the classifier never blocks on a slow step: unless the
model is loaded and the centroids are ready (``warm()`` does both, e.g. in a background
thread), only cues are used. If the embedder fails, cues are used too. A message with no
signal at all gets ``DEFAULT``.

It is pure: no UI imports, no I/O, and nothing is loaded at import time.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Protocol

import numpy as np

EMOTIONS: tuple[str, ...] = (
    "curious",
    "encouraging",
    "focused",
    "playful",
    "serious",
    "reflective",
    "celebrating",
)
DEFAULT = "reflective"

MEANINGS: dict[str, str] = {
    "curious": "curious — asking, exploring an open question",
    "encouraging": "encouraging — steadying you when something feels hard",
    "focused": "focused — planning, prioritising, getting things done",
    "playful": "playful — light, silly, joking along",
    "serious": "serious — grave news, fear, loss; calm and careful",
    "reflective": "reflective — looking back, making sense of patterns",
    "celebrating": "celebrating — a win, a milestone, good news",
}


# How much one unit of cue weight counts against cosine similarity (which for this model
# sits around 0.1-0.7 for related sentences).
CUE_WEIGHT = 0.12
# With embeddings and no cue, a message below this best similarity, or shorter than
# MIN_WORDS words ("ok", "hmm", "hello"), says too little: it gets DEFAULT.
MIN_SIMILARITY = 0.18
MIN_WORDS = 3
# Regexes only look at this much of a message, so a pasted essay stays fast.
MAX_CUE_CHARS = 4000

_W = r"(?<![\w'])"  # word start (Unicode-aware)
_WORDS = re.compile(r"\w+")

# (pattern, weight) per register; each pattern counts at most once per message.
_CUE_SOURCES: dict[str, tuple[tuple[str, float], ...]] = {
    "curious": (
        (_W + r"what if\b", 1.5),
        (_W + r"i (?:wonder|was wondering)\b", 1.5),
        (_W + r"curious\b", 1.5),
        (_W + r"(?:wonder(?:ing)? (?:if|whether|why|what|how))\b", 1.0),
        (_W + r"(?:tell me (?:about|something)|what do (?:my notes|i) say)\b", 1.0),
        (_W + r"(?:is there a pattern|have i ever|did i ever|do i ever)\b", 1.0),
        (_W + r"(?:explore|figure out|find out|interested in)\b", 0.6),
        (_W + r"(?:what do you make of|what would (?:have )?happen\w*|what might)\b", 1.0),
        (
            _W + r"(?:i can'?t (?:quite )?(?:recall|remember)|what was (?:the|his|her|their) "
            r"name)\b",
            1.0,
        ),
        (
            _W + r"(?:is it true|what happened (?:with|to|at)|have i always|am i (?:more|less))\b",
            1.0,
        ),
        (
            _W + r"(?:do you (?:notice|see|spot)|what stands out|what (?:links|connects)"
            r"|is there (?:a|any) (?:connection|link|theme|relationship)|any (?:connection|link"
            r"|theme)|would you guess|what would you (?:guess|say))\b",
            1.2,
        ),
    ),
    "encouraging": (
        (_W + r"i (?:can'?t|cannot|can not|couldn'?t)\b(?! (?:recall|remember|think of))", 1.2),
        (_W + r"(?:struggl\w*|hard for me|too hard|so hard|really hard|it'?s hard)\b", 1.5),
        (_W + r"(?:try(?:ing)? again|keep trying|one more try|another go)\b", 1.2),
        (_W + r"(?:nervous|anxious|worried|dreading|intimidated) (?:about|for|before)\b", 1.5),
        (_W + r"(?:nervous|anxious|stuck|overwhelmed|discouraged|demotivated)\b", 0.8),
        (_W + r"(?:not (?:good|smart|strong|brave) enough|useless|hopeless|a failure)\b", 1.5),
        (
            # Quitting a habit ("quit coffee") is not giving up on something hard.
            _W + r"(?:give up|giving up|quit(?! (?:coffee|caffeine|smoking|drinking|sugar|alcohol"
            r"|vaping))|failed|fail|failing|setback|rejected)\b",
            1.0,
        ),
        (_W + r"(?:i keep (?:missing|failing|messing|forgetting|comparing)|keep messing)\b", 1.0),
        (_W + r"(?:not sure i can|don'?t think i can|i doubt|self[- ]doubt|imposter)\b", 1.3),
        (_W + r"(?:embarrass\w*|ashamed|behind everyone|smarter than me|better than me)\b", 1.0),
        (_W + r"(?:trying to|i want to get better|practi[cs]e|only managed)\b", 0.6),
        (
            _W + r"(?:feel(?:ing)? (?:like )?(?:a )?(?:rubbish|useless|stupid|awful|a failure"
            r"|hopeless|behind|inadequate)|so bad at|terrible at|procrastinat\w*)",
            1.2,
        ),
        (
            _W + r"(?:(?:scared|afraid|worried|terrified) (?:i'?ll|i will|that i'?ll|of) "
            r"(?:mess|fail|screw|get it wrong|embarrass|let))",
            2.0,
        ),
        (_W + r"(?:should be further|further along|can'?t stop|keep putting off)\b", 1.0),
        (
            _W
            + r"(?:pointless|impossible|what'?s the point|no point|messed up|screwed up|blew it)",
            1.2,
        ),
        (
            _W + r"(?:slowest|worst (?:at|in|one)|the only one who|they'?ll (?:say no|reject|hate)"
            r"|i'?m sure (?:i'?ll|they'?ll) (?:fail|say no|hate))",
            1.2,
        ),
        (
            _W
            + r"(?:starting over|for the (?:second|third|fourth|\w+th) time|still (?:hurts|can'?t))",
            0.8,
        ),
        # Questions about one's own effort and progress ("am I getting better", "can I ...").
        (
            _W + r"(?:am i (?:\w+ )?(?:getting|becoming) (?:any )?(?:better|faster|stronger|fitter"
            r"|quicker|worse)|am i improving|have i (?:\w+ )?(?:improved|got(?:ten)? better)"
            r"|(?:made|making) (?:any |much )?progress)\b",
            1.5,
        ),
        (
            _W + r"(?:can i (?:really|actually|still|even|ever)|could i (?:really|actually|ever)"
            r"|will i ever|do you think i(?:'m| am)? (?:can|could|will|ready|able|good)"
            r"|am i (?:ready|able|capable|doing enough|too old|good enough)|too late for me)\b",
            1.5,
        ),
        (
            _W + r"(?:keep (?:going|at it)|(?:stay|staying|keep|get|feel|feeling) motivated"
            r"|(?:no|any|lost (?:my|all)) motivation|stick (?:to|with)|get the hang"
            r"|is it (?:normal|okay|ok) (?:that|to|if)|quitting|still (?:this|so) slow|so slow)\b",
            1.2,
        ),
    ),
    "focused": (
        (_W + r"(?:plan|planning|schedule|timetable|agenda|roadmap)\b", 1.4),
        (_W + r"(?:to-?do|todo list|task list|tasks?|action items?|checklist)\b", 1.4),
        (_W + r"(?:prioriti[sz]\w*|priority|priorities|most (?:important|useful|urgent))\b", 1.5),
        (
            _W + r"(?:deadlines?|due (?:on|by)|by (?:monday|tuesday|wednesday|thursday|friday"
            r"|saturday|sunday|tomorrow|tonight|the end of))\b",
            1.2,
        ),
        (_W + r"(?:how (?:do|should|can) i|where do i start|what should i (?:do|work))\b", 1.0),
        (_W + r"(?:break (?:it |this |that )?down|split|steps?|organi[sz]e|sort out)\b", 1.0),
        (_W + r"(?:list|summari[sz]e|outline|draft|checklist|remind me)\b", 0.8),
        (_W + r"(?:get (?:it|this|things|them) done|finish (?:by|before)|need to get)\b", 1.0),
        (_W + r"(?:focus|work on|next step|this week|today'?s|hours? (?:left|free))\b", 0.6),
        (
            _W + r"(?:need to (?:do|finish|get|sort|pack|book)|errands|tackle|in order"
            r"|what'?s due|packing list)\b",
            1.0,
        ),
        (
            _W + r"(?:what do i (?:have|need) to|routine|sections?|next steps?|should i (?:drop"
            r"|choose|pick|do first|start with))\b",
            1.0,
        ),
        # Decisions and preparation ("what should I do about ...", "should I take ...").
        (
            _W + r"(?:what should i do|what do i do (?:about|with|now|next)|should i (?:take|accept"
            r"|stay|go|leave|move|say|tell|ask|apply|wait|turn|sign|keep|go for|say yes)"
            r"|which (?:option|one) should|decide|deciding|decision (?:about|on)|pros and cons"
            r"|weigh (?:up )?(?:the )?(?:options|offer))\b",
            2.0,
        ),
        (
            _W + r"(?:prepare|preparing|prep for|deliver\w*|hand(?:ed|ing)? over|handover"
            r"|appointment|booking|book (?:the|a|an|my) (?:\w+ )?(?:flight|train|van|table|room"
            r"|hotel|taxi|slot|tickets?)|fit (?:\w+ ){0,3}(?:around|into)|juggl\w*)\b",
            1.0,
        ),
    ),
    "playful": (
        (_W + r"(?:haha\w*|hehe\w*|lol\w*|lmao\w*|rofl|xd)\b", 2.0),
        (_W + r"(?:silly|joke|jokes|funny|goofy|ridiculous|absurd|weirdest|roast)\b", 1.3),
        (_W + r"(?:let'?s play|a game|guess what|bet you|rate my|out of ten|/10)\b", 1.2),
        (_W + r"(?:haiku|limerick|rhyme|pun|as if (?:it|i) were|if my \w+ (?:was|were))\b", 1.2),
        (_W + r"(?:dance[ds]?|dancing|idiot|nonsense|cheeky|mischie\w*)\b", 0.6),
        (
            _W + r"(?:pretend (?:you'?re|to be|i'?m)|as a pirate|in the voice of|talk like"
            r"|what would my \w+ say)\b",
            1.4,
        ),
        (
            _W + r"(?:no regrets|nemesis|possessed|dramatic|legendary|chaos|chaotic|shenanigans)\b",
            1.0,
        ),
        (
            r"[\U0001F602\U0001F923\U0001F606\U0001F605\U0001F61C\U0001F61D\U0001F92A"
            r"\U0001F643\U0001F609\U0001F604\U0001F601\U0001F638\U0001F639]",
            1.6,
        ),
        (r"(?:[:;]-?[pP]\b|[:;]-?D\b|\bxD\b)", 1.2),
        # What a question is after: the silliest, the funniest, a talking pet.
        (
            _W + r"(?:silli\w*|funn(?:ier|iest)|daft\w*|dumbest|craziest|strangest|goofiest"
            r"|most ridiculous|most embarrassing thing)\b",
            1.3,
        ),
        (
            _W + r"(?:if (?:she|he|it|they|my \w+|the \w+) could (?:talk|speak|write|text)"
            r"|what would (?:\w+ ){1,3}say about me|who would win)\b",
            1.4,
        ),
    ),
    "serious": (
        (_W + r"(?:diagnos\w*|cancer|tumou?r|lump|biopsy|chemo\w*|stroke|heart attack)", 2.0),
        (_W + r"(?:died|dead|death|passed away|funeral|lost (?:my|our|the) \w+|we lost)\b", 2.0),
        (_W + r"(?:hospital|a&e|emergency|ambulance|icu|intensive care|surgery)\b", 1.6),
        (_W + r"(?:scared|terrified|frightened|panic\w*|afraid)\b", 1.5),
        (_W + r"(?:suicid\w*|self[- ]harm|hurt(?:ing)? (?:my|her|him|them)sel\w+|kill)", 2.5),
        (_W + r"(?:abuse\w*|assault\w*|police|accident|crash)\b", 1.5),
        (_W + r"(?:broke up|breakup|divorce|separat\w+|left me|cheated)\b", 1.5),
        (_W + r"(?:laid off|layoffs?|fired|lose my job|redundan\w*|evict\w*|debt|mortgage)\b", 1.3),
        (
            _W + r"(?:can'?t get out of bed|haven'?t (?:eaten|slept)|something is (?:really )?wrong"
            r"|don'?t know who to talk to)",
            1.6,
        ),
        (
            _W + r"(?:doctor|(?:more|blood|medical) tests|results|sick|ill|grief|grieving"
            r"|miscarr\w*|vet)\b",
            0.7,
        ),
        (_W + r"(?:chest pains?|can'?t breathe|bleeding|put (?:\w+ )?(?:down|to sleep))\b", 1.2),
        (
            _W + r"(?:scan|dementia|alzheimer\w*|crying|flood\w*|fire|burgl\w*|addict\w*|relapse\w*"
            r"|overdose\w*|drinking every|i need help|violen\w*|hit (?:me|her|him|them))\b",
            1.4,
        ),
        (r"[\U0001F622\U0001F62D\U0001F494]", 0.8),
        # Questions about crying, conflict and illness.
        (_W + r"(?:cried|cry|tears|sobb\w*|broke down|breaking down)\b", 1.4),
        (
            _W + r"(?:fight|fights|fought|argument\w*|argu(?:e|ed|ing)|rows? (?:with|about)"
            r"|shout\w*|yell\w*|scream\w*|fell out|falling out)\b",
            1.2,
        ),
        (
            _W + r"(?:depress\w*|anxiety|antidepressant\w*|breakdown|burn-?out|illness|unwell"
            r"|in pain|seizures?|infection|mental health|medication)\b",
            1.2,
        ),
    ),
    "reflective": (
        (_W + r"(?:remember when|do you remember|i remember|looking back|in hindsight)\b", 1.8),
        (_W + r"(?:why do i always|why do i keep|i always seem|i never seem)\b", 1.8),
        (_W + r"(?:used to|back then|those days|years? ago|since i (?:moved|left|started))\b", 1.2),
        (_W + r"(?:i'?ve been thinking|thinking about|reflect\w*|make sense of)\b", 1.0),
        (_W + r"(?:\w+ years? since|back when|makes me think|reminds me of|i'?ve noticed)\b", 1.2),
        (_W + r"(?:miss(?:ed)?|nostalgi\w*|old (?:entries|notes|journals?|photos))\b", 1.0),
        (_W + r"(?:grown|changed|growth|who i was|who i am|the person i)\b", 1.0),
        (_W + r"(?:pattern|meaning|what does \w+ mean|the older i get|a year since)\b", 0.8),
        (_W + r"(?:quiet|sitting with|lately|these days|sometimes i)\b", 0.6),
        (_W + r"(?:right choice|right decision|regret\w*|if only)\b", 1.0),
        (
            _W
            + r"(?:what i wrote (?:when|back|in|about)|when i was (?:younger|little|a kid|\d+))\b",
            1.2,
        ),
        # Questions about how something felt, looking back.
        (
            _W + r"(?:how (?:did|do|does|was|were) (?:i|it|that|we) (?:feel|felt|feeling)"
            r"|how was i feeling|how i felt|what (?:did|does) it feel like|what was it like"
            r"|feel(?:ings?)? (?:about|towards)|felt (?:about|towards))\b",
            1.8,
        ),
        (
            _W + r"(?:what (?:was|were) (?:i|we) like|who was i|what do i remember"
            r"|do i (?:still )?remember|memor(?:y|ies)|first (?:met|night|day|date|week)"
            r"|(?:my|our) last (?:day|night|week)|the last time (?:i|we) (?:saw|spoke|talked)"
            r"|going through my (?:head|mind)"
            r"|do i still|have i changed|still feel)\b",
            1.2,
        ),
    ),
    "celebrating": (
        (r"[!！]\s*[!！]", 1.2),
        (_W + r"(?:passed|nailed it|aced|smashed it|we did it|i did it|made it)\b", 1.8),
        (_W + r"(?:got (?:the|a|my) (?:job|offer|place|promotion|grant|scholarship|part))\b", 2.0),
        (
            _W + r"(?:accepted|promot\w+|hired|won|winning|graduat\w+|engaged|she said yes"
            r"|he said yes|they said yes)\b",
            1.6,
        ),
        (_W + r"(?:finally|at last)\b", 0.8),
        (
            _W + r"(?:got into|got an? (?:agent|offer|yes|place|contract)|published|paid off"
            r"|for the first time|went well|good news|great news)\b",
            1.4,
        ),
        (
            _W + r"(?:benign|all clear|clean bill|in remission|cancer[- ]free|first steps"
            r"|first words|closed (?:the|a|our) (?:deal|round|sale)|extended my contract"
            r"|got a raise|loved my)\b",
            1.8,
        ),
        (_W + r"(?:finished|completed|launched|shipped|is live|went through|signed)\b", 1.0),
        (_W + r"(?:milestone|goal|record|personal best|\bpb\b|sober)\b", 0.8),
        (_W + r"(?:celebrat\w*|so happy|so proud|proud of|thrilled|over the moon|yay|woo+)\b", 1.5),
        (_W + r"(?:had (?:her|his|their) baby|new baby|i'?m an? (?:aunt|uncle|doctor))\b", 1.5),
        (r"[\U0001F389\U0001F973\U0001F38A\U0001F37E\U0001F3C6\U0001F64C\U0001F942]", 1.6),
        # Questions about births, birthdays, awards, finishing lines, new keys.
        (
            _W + r"(?:born|birth|birthday|pregnan\w*|newborn|christening|anniversar\w*"
            r"|award|trophy|medal|prize|first place|podium|finish line|crossed the line"
            r"|new (?:record|best|pb)|(?:got|get|getting|picked up) (?:the )?keys"
            r"|keys to (?:the|our|my) new)\b",
            1.4,
        ),
        (
            _W + r"(?:finish(?:ed|ing)?|complet(?:e|ed|ing)) (?:the|my|a|an|our|that) (?:\w+ )?"
            r"(?:marathon|half|race|ultra|triathlon|\d+ ?k)\b",
            1.4,
        ),
    ),
}

# The form of a question, as opposed to what it is about. Most messages to sadie are
# questions about the person's own life ("how did I feel at the funeral?", "when did I
# finish the marathon?"), so the form alone must not decide the register: these cues count
# toward curious only when no other register has a cue of its own (see ``cue_scores``).
_QUESTION_FORM_SOURCES: tuple[tuple[str, float], ...] = (
    (r"\?", 0.2),
    (r"[¿？]", 0.2),
    (
        r"^\W*(?:hm+\W+|ok\W+|so\W+)?(?:what|who|when|where|which|how|why|is|are|do|does|did"
        r"|have|has|was|were|can|could)\b",
        0.25,
    ),
    (_W + r"(?:how (?:often|many|much)|when did i|who was|what was|which)\b", 0.2),
    (_W + r"(?:do you think|any idea|what about|why did i|why do i)\b", 0.2),
)

CUES: dict[str, tuple[tuple[re.Pattern[str], float], ...]] = {
    name: tuple((re.compile(src, re.IGNORECASE), weight) for src, weight in sources)
    for name, sources in _CUE_SOURCES.items()
}
QUESTION_FORM: tuple[tuple[re.Pattern[str], float], ...] = tuple(
    (re.compile(src, re.IGNORECASE), weight) for src, weight in _QUESTION_FORM_SOURCES
)

# Typical messages per register; with EXEMPLARS, embedded once per classifier and averaged.
PROTOTYPES: dict[str, tuple[str, ...]] = {
    "curious": (
        "I wonder what that says about me.",
        "What did I write about that trip?",
        "When was the first time I mentioned her in my notes?",
        "Do you think there's a connection between those two things?",
        "What if I had chosen differently back then?",
        "Tell me what you know about my time in that city.",
        "How often do I write about work?",
        "Who was that person I met at the conference?",
        "What was happening in my life around then?",
        "Is there anything in my journal about my health?",
        "Why did I decide to change jobs, according to my notes?",
        "Which places have I said I want to visit?",
    ),
    "encouraging": (
        "I can't do this, it's too much for me.",
        "I'm struggling and I keep falling behind.",
        "I'm nervous about tomorrow and I don't feel ready.",
        "I failed again and I feel like giving up.",
        "I don't think I'm good enough.",
        "I keep trying but nothing seems to work.",
        "I feel like everyone is doing better than me.",
        "I want to keep going but it's hard to stay motivated.",
        "I'm afraid I'll make a fool of myself.",
        "I've been so unproductive, I feel like a failure.",
        "Learning this is taking me forever and I'm frustrated.",
        "I'm slowly getting back on track but it's tough.",
    ),
    "focused": (
        "Help me plan my week.",
        "What should I work on first today?",
        "Make a to-do list of everything I need to do.",
        "Break this project down into steps.",
        "I have a deadline on Friday, where should I start?",
        "Give me a schedule for tomorrow.",
        "What are the open tasks I wrote down?",
        "Summarise the next actions from my notes.",
        "What do I still need to sort out before the trip?",
        "Put these errands in a sensible order.",
        "How do I get this report finished on time?",
        "Let's make a checklist for the move.",
    ),
    "playful": (
        "Haha, that's so silly.",
        "Tell me a joke.",
        "lol I did the dumbest thing today",
        "Let's play a game.",
        "Make fun of me a little, I deserve it.",
        "Write a funny poem about my day.",
        "If my life was a sitcom, what would this episode be called?",
        "The cat did something ridiculous again.",
        "Describe my weekend like a dramatic movie trailer.",
        "Give me a funny nickname.",
        "I tripped over nothing in front of everyone, classic me.",
        "Guess what absurd thing happened at work today.",
    ),
    "serious": (
        "I just got some terrible news.",
        "Someone I love died.",
        "I'm really scared, I'm at the hospital.",
        "The doctor said it might be serious.",
        "I had a panic attack and I can't calm down.",
        "My relationship just ended.",
        "I'm worried about money, we might lose the house.",
        "I'm not okay and I don't know what to do.",
        "I was let go from work today.",
        "We had to say goodbye to our dog.",
        "My friend is in crisis and I'm frightened for her.",
        "Everything fell apart this week and I can't cope.",
    ),
    "reflective": (
        "Looking back, that time changed me.",
        "Remember when we used to do that every year?",
        "Why do I always end up in the same place?",
        "I've been thinking about who I used to be.",
        "It's strange to read what I wrote years ago.",
        "I miss how things were.",
        "How have I changed over the last few years?",
        "Just a quiet moment, thinking about life.",
        "Some friendships drift apart and I think about that a lot.",
        "I keep going back to that summer in my mind.",
        "What has this year taught me?",
        "I used to believe I'd live somewhere else by now.",
    ),
    "celebrating": (
        "I did it!",
        "I got the job!",
        "We finally made it happen!",
        "Great news, I passed!",
        "I finished it, after all this time.",
        "It's official, we're moving in together!",
        "I reached my goal today.",
        "Best day ever, I can't believe it worked out!",
        "My work got published.",
        "We won the match!",
        "The results came back and everything is fine!",
        "One year without smoking today.",
    ),
}

# Real-sounding messages per register: the tuning and blind-check sentences written while
# building this module, then questions about each register's matter (most messages to a
# memory companion are questions, so every centroid has some). Never the test evaluation
# sets (tests/data/emotion_eval.jsonl, tests/data/emotion_questions_eval.jsonl).
EXEMPLARS: dict[str, tuple[str, ...]] = {
    "curious": (
        "what was going on with me in March?",
        "I wonder if I was happier when I lived alone",
        "did I ever write about the wedding",
        "what do you make of my dreams lately",
        "how many times did I go climbing last year",
        "why did I stop talking to Sam",
        "what would have happened if I'd stayed in Spain",
        "anything interesting in my notes from the summer?",
        "have I always been this into birds or is it new",
        "what was the name of that café near the station I liked",
        "do I write more when I'm sad or when I'm happy?",
        "hm, what did my therapist suggest in spring",
        "is it true I've never been to Scotland",
        "what happened with the neighbour's fence in the end",
        "what was my mood like the week before the wedding",
        "did Tom ever pay me back for the concert tickets",
        "how did I end up volunteering at the food bank",
        "what's the longest gap between my journal entries",
        "was I already thinking about moving before the job came up?",
        "what kind of music was I listening to in 2021",
        "remind me, what was the thing about the violin teacher",
        # Questions about this register's matter, so being a question is not curious.
        "what do you make of the way I describe my weekends?",
        "I wonder if I'm more of a morning person than I think",
        "do you see any theme in the books I pick?",
        "what stands out to you in my entries from last month?",
        "any idea why I always start new notebooks in September?",
        "is there a link between the weather and how much I write?",
    ),
    "encouraging": (
        "I tried to go to the gym but turned around at the door",
        "I'm so bad at keeping in touch with people",
        "my manager criticised my report and I feel rubbish",
        "can't stop procrastinating on the application",
        "I'm scared I'll mess up my first day at the new place",
        "I keep failing the same exam",
        "everyone says I should be further along by now",
        "it took me all day to answer one email",
        "I sent the application but I'm sure they'll say no",
        "my hands shake every time I have to speak up in meetings",
        "three weeks of physio and my knee still hurts, feels pointless",
        "I'm the slowest in my climbing group",
        "I messed up the recipe for the third time",
        "starting over at 40 feels impossible",
        "I've rewritten this cover letter five times and it still sounds wrong",
        "nobody replied in the group chat again",
        "my Spanish conversation partner corrected me so much I went quiet",
        "I skipped my run again, third day in a row",
        "I want to ask for a raise but I'll probably chicken out",
        "I feel so behind on everything",
        "the landlord ignored my email and I don't have the energy to chase it",
        # Questions about this register's matter, so being a question is not curious.
        "am I getting any stronger at the climbing wall?",
        "can I actually learn to swim at my age?",
        "will I ever be good at public speaking?",
        "is it too late for me to change careers?",
        "how do I stay motivated when I keep missing sessions?",
        "have I improved at all since I started piano lessons?",
        "do you think I'm ready to apply for the senior role?",
        "why does every long run feel like such a slog?",
        "is my Italian any better than it was at Christmas?",
    ),
    "focused": (
        "what do I need to do tomorrow",
        "can you help me organise the wedding prep",
        "put my errands in order",
        "what's due this week",
        "outline the essay for me based on my notes",
        "make a packing list for the camping trip",
        "I have a free afternoon, what should I tackle",
        "set out the steps to apply for the visa",
        "I've got a free Saturday and a long list, help",
        "what do I have to bring to the appointment",
        "sort my notes on the grant into sections",
        "which of these three projects should I drop",
        "what are the next steps for the garden",
        "I need a routine for exam season",
        "can you turn my meeting notes into next actions",
        "help me figure out what to cook this week with what's in the fridge",
        "what did I promise people I'd send them",
        "order these by urgency: dentist, visa, birthday present",
        "I'm going to work for 90 minutes, what's the one thing",
        "I need to reply to five emails, which first",
        "what's left on the wedding checklist",
        # Questions about this register's matter, so being a question is not curious.
        "what should I do first when I get back from leave?",
        "should I accept the offer or wait to hear from the other place?",
        "what do I have left to pack?",
        "when are the invoices due?",
        "what did I say I'd finish for the client by the end of the month?",
        "how should I split my time between the two projects?",
        "what do I need for the passport renewal?",
        "which flat makes more sense, the cheaper one or the one near work?",
        "what's the next thing on the list for the wedding?",
    ),
    "playful": (
        "hehe my plant is thriving more than I am",
        "make up a ridiculous nickname for me",
        "describe my morning like a nature documentary",
        "the toddler called me a potato today 😂",
        "bet you can't make my commute sound exciting",
        "write a limerick about my landlord",
        "I wore odd socks to the meeting and nobody noticed lol",
        "guess what I had for dinner",
        "pretend you're a pirate and summarise my month",
        "I have eaten an entire cheesecake. no regrets",
        "what would my cat say about me if she could talk",
        "the printer is possessed again 🙃",
        "give my week a dramatic title",
        "ok honestly who is my most mentioned nemesis",
        "if I were a biscuit which one would I be",
        "today's achievement: I put on real trousers",
        "the seagull stole my chips AGAIN",
        "tell me my fortune based on my last three entries",
        "my sourdough starter has a name and a personality now",
        "on a scale of one to goblin how was my weekend",
        "make my grocery list sound like an epic quest",
        # Questions about this register's matter, so being a question is not curious.
        "what's the dumbest thing I've ever bought online?",
        "which of my cooking disasters was the funniest?",
        "if the cat could talk what would she complain about?",
        "can you give my commute a dramatic movie title?",
        "who's the biggest drama queen in my family? haha",
        "what's the strangest thing I've found in my coat pockets?",
        "how many times have I mentioned cake this month? lol",
        "what would a pirate make of my weekend plans?",
    ),
    "serious": (
        "my mum is in intensive care",
        "the vet says we have to put Biscuit down",
        "I think my partner is hiding something from me and I'm frightened",
        "I got the biopsy results and they're not good",
        "my best friend passed away last night",
        "I lost my job today",
        "I keep having chest pains",
        "we had to call the police last night",
        "the scan showed something on my liver",
        "my sister's husband hit her",
        "I found out my dad has dementia",
        "I can't stop crying since the funeral",
        "I think I need help, I've been drinking every night",
        "our house flooded and we've lost most of our things",
        "my mum fell and broke her hip, she's alone",
        "the police came to the door about my brother",
        "I've been having really dark thoughts",
        "they found a shadow on his lung",
        "my best friend's been missing since Tuesday",
        "I'm so worried about Dad, he's stopped eating",
        "we got the call from the hospice this morning",
        # Questions about this register's matter, so being a question is not curious.
        "what did the consultant say about Gran's heart?",
        "how long was I off work with the anxiety last year?",
        "what did I write the night we called an ambulance for Dad?",
        "when did things start going wrong between me and my ex?",
        "what happened at the funeral? I can't remember much of it",
        "who did I call after the miscarriage?",
        "what did my sister say when I told her about the divorce?",
        "how many nights did I lie awake after the burglary?",
        "what did the oncologist say at the last appointment?",
    ),
    "reflective": (
        "I was so different at twenty",
        "I keep thinking about the old flat on Mill Road",
        "what have the last five years taught me",
        "it's strange how some friendships just fade",
        "reading what I wrote when Dad was ill",
        "why do I keep choosing the same kind of people",
        "back then I thought I'd be a painter",
        "rainy Sunday, feeling nostalgic",
        "ten years since graduation, wild",
        "it's odd to think of the person I was in that relationship",
        "I've noticed I'm kinder to myself these days",
        "what keeps pulling me back to the sea, do you think",
        "autumn always makes me think of my grandad",
        "do I still want the same things I wanted at 25",
        "I was reading about my old job and I barely recognise myself",
        "I think I've finally stopped being angry at her",
        "the house feels different since the kids left",
        "it's my birthday and I keep thinking about time",
        "what would twenty-year-old me think of my life now",
        "I notice I write about my father more in winter",
        "odd evening. feel like I'm between chapters",
        # Questions about this register's matter, so being a question is not curious.
        "how was I feeling in the months after graduation?",
        "what was it like living in the old house?",
        "how did it feel to leave home at eighteen?",
        "what did that year abroad mean to me?",
        "how do I see my childhood now, compared with when I was twenty?",
        "what was on my mind during those long walks last autumn?",
        "do I still think about my first love?",
        "how did I feel about turning thirty?",
        "what was I like at university, going by my old notes?",
    ),
    "celebrating": (
        "I got into the master's programme!",
        "finally paid off the credit card",
        "our team won the league!!",
        "my novel got an agent",
        "ran a 5k without stopping for the first time",
        "we got the keys to the new flat 🎉",
        "the surgery went well and she's home",
        "my article got published today",
        "the biopsy was benign!!",
        "I finally ran the whole loop without walking",
        "we closed the funding round today",
        "my son took his first steps",
        "six months at the new job and they extended my contract",
        "the book club loved my pick 🥳",
        "THE VISA CAME THROUGH",
        "I told my boss no and the world didn't end, I'm so proud",
        "my grandma turned 90 today and the whole family came",
        "the kids' school play was amazing and Mia nailed her lines",
        "first pay cheque from my own business!",
        "we're pregnant!!",
        "I walked up the whole hill without stopping, first time since the surgery",
        # Questions about this register's matter, so being a question is not curious.
        "what did I write the day I got my degree results?",
        "how did we mark Dad's retirement?",
        "what was my time at the parkrun where I got a PB?",
        "when did my nephew take his first steps?",
        "what did the card from the team say when I hit five years?",
        "what did my friends say when we got engaged?",
        "what did we eat at the party for my brother's 30th?",
        "when did we hear the adoption had been approved?",
        "how long did it take me to finish my first triathlon?",
    ),
}


class Encoder(Protocol):
    """What the classifier needs of an embedder (see ``ingest.embedder.Embedder``)."""

    @property
    def loaded(self) -> bool: ...

    def encode(self, texts: list[str]) -> np.ndarray: ...


@dataclass(frozen=True)
class EmotionChoice:
    """The chosen register, every register's score, and which signal decided it."""

    value: str
    scores: Mapping[str, float]
    via: str  # "cues" | "embedding" | "default"


def cue_scores(message: str) -> dict[str, float]:
    """Summed cue weight per register for ``message`` (each pattern counts once).

    The question-form cues (``QUESTION_FORM``) are added to curious only when no other
    register has a cue: a question is curious unless it is recognisably about something
    (a loss, a feeling looking back, a win, a plan, a struggle, a joke).
    """
    text = message[:MAX_CUE_CHARS]
    scores = {
        name: float(sum(weight for pattern, weight in CUES[name] if pattern.search(text)))
        for name in EMOTIONS
    }
    if all(scores[name] <= 0.0 for name in EMOTIONS if name != "curious"):
        scores["curious"] += float(
            sum(weight for pattern, weight in QUESTION_FORM if pattern.search(text))
        )
    return scores


def _best(scores: Mapping[str, float]) -> str:
    # Highest score wins; ties go to the earlier register in EMOTIONS (deterministic).
    return max(EMOTIONS, key=lambda name: (scores[name], -EMOTIONS.index(name)))


def _frozen(scores: Mapping[str, float]) -> Mapping[str, float]:
    return MappingProxyType({name: round(float(scores[name]), 6) for name in EMOTIONS})


class EmotionClassifier:
    """Choose a register for a message from cues plus similarity to register centroids."""

    def __init__(self, embedder: Encoder | None = None) -> None:
        self._embedder = embedder
        self._lock = threading.Lock()
        self._centroids: np.ndarray | None = None  # (7, dim) normalised, in EMOTIONS order

    @property
    def embedder(self) -> Encoder | None:
        return self._embedder

    def _centroid_matrix(self) -> np.ndarray:
        """Embed every register's sentences once and keep their normalised means."""
        embedder = self._embedder
        if embedder is None:
            raise RuntimeError("no embedder")
        if self._centroids is None:
            with self._lock:
                if self._centroids is None:
                    texts: list[str] = []
                    bounds: list[tuple[int, int]] = []
                    for name in EMOTIONS:
                        examples = PROTOTYPES[name] + EXEMPLARS[name]
                        bounds.append((len(texts), len(texts) + len(examples)))
                        texts.extend(examples)
                    # The sentences never change: an embedder that keeps fixed texts' vectors
                    # on disk spares every start from running the model over all of them.
                    fixed = getattr(embedder, "encode_fixed", None)
                    vectors = fixed(texts, "emotions") if fixed else embedder.encode(texts)
                    matrix = np.asarray(vectors, dtype=np.float32)
                    rows = np.stack([matrix[start:end].mean(axis=0) for start, end in bounds])
                    norms = np.linalg.norm(rows, axis=1, keepdims=True)
                    self._centroids = (rows / np.maximum(norms, 1e-12)).astype(np.float32)
        return self._centroids

    def warm(self) -> None:
        """Embed the register sentences now (loads the model); safe to call from a thread."""
        if self._embedder is not None:
            self._centroid_matrix()

    def _similarities(self, message: str) -> dict[str, float] | None:
        """Cosine similarity of the message to each register's centroid; None if unavailable."""
        try:
            centroids = self._centroid_matrix()
            assert self._embedder is not None
            vector = np.asarray(self._embedder.encode([message]), dtype=np.float32)[0]
            sims = centroids @ vector
        except Exception:  # noqa: BLE001 - no embedding model means cues only, never a crash
            return None
        if not np.all(np.isfinite(sims)):
            return None
        return {name: float(sims[index]) for index, name in enumerate(EMOTIONS)}

    @property
    def ready(self) -> bool:
        """True once the model is loaded and the centroids are embedded (choose is fast)."""
        return self._centroids is not None and self._loaded()

    def _loaded(self) -> bool:
        try:
            return bool(self._embedder is not None and self._embedder.loaded)
        except Exception:  # noqa: BLE001 - an odd embedder counts as not loaded
            return False

    def _can_embed(self, allow_load: bool) -> bool:
        if self._embedder is None:
            return False
        return allow_load or self.ready

    def choose(self, message: str, *, allow_load: bool = True) -> EmotionChoice:
        """The register for ``message``.

        ``scores`` holds the combined score per register when embeddings were used, else
        the summed cue weights. ``via`` says what decided: "embedding" (embeddings plus
        cues), "cues", or "default" (empty message or no signal).
        """
        text = message.strip() if isinstance(message, str) else ""
        if not text:
            return EmotionChoice(DEFAULT, _frozen(dict.fromkeys(EMOTIONS, 0.0)), "default")
        cues = cue_scores(text)
        sims = self._similarities(text) if self._can_embed(allow_load) else None
        if sims is None:
            if max(cues.values()) <= 0.0:
                return EmotionChoice(DEFAULT, _frozen(cues), "default")
            return EmotionChoice(_best(cues), _frozen(cues), "cues")
        combined = {name: sims[name] + CUE_WEIGHT * cues[name] for name in EMOTIONS}
        too_little = len(_WORDS.findall(text)) < MIN_WORDS or max(sims.values()) < MIN_SIMILARITY
        if max(cues.values()) <= 0.0 and too_little:
            return EmotionChoice(DEFAULT, _frozen(combined), "default")
        return EmotionChoice(_best(combined), _frozen(combined), "embedding")


_default_classifiers: dict[int, EmotionClassifier] = {}
_default_lock = threading.Lock()


def classifier_for(embedder: Encoder | None) -> EmotionClassifier:
    """One classifier per embedder, so the prototype sentences are embedded once a process."""
    key = id(embedder)
    with _default_lock:
        classifier = _default_classifiers.get(key)
        if classifier is None or classifier.embedder is not embedder:
            if len(_default_classifiers) >= 8:
                _default_classifiers.clear()
            classifier = EmotionClassifier(embedder)
            _default_classifiers[key] = classifier
    return classifier


def choose_emotion(message: str, embedder: Encoder | None = None) -> str:
    """The register name for ``message`` (classifier cached per embedder)."""
    return classifier_for(embedder).choose(message).value

# ruff: noqa: E501  (one regular expression per line reads better than split strings)
"""The Chinese and English patterns of `RuleExtractor`: what people say about themselves.

Each pattern has a key, whether it states or negates (``"add"`` or
``"delete"``), and one named group ``v``, the value. A pattern sees one
clause at a time (split at sentence and clause punctuation), so a value
never runs across a comma.
"""

from __future__ import annotations

import re

SINGLE = frozenset(
    {"user.name", "user.location", "user.job", "user.employer", "user.school"}
    | {"user.birthday", "user.diet"}
)
"""Keys with one value at a time: a new value supersedes the old one on the path."""

MULTI = frozenset(
    {"user.likes", "user.dislikes", "user.allergy", "user.pet", "user.family"}
    | {"user.device", "user.plan", "user.sport"}
)
"""Keys whose values accumulate (a person has several pets and likes)."""

TEMPLATES: dict[str, tuple[str, str]] = {
    "user.name": ("用户叫{v}", "User's name is {v}"),
    "user.location": ("用户住在{v}", "User lives in {v}"),
    "user.job": ("用户的职业是{v}", "User works as {v}"),
    "user.employer": ("用户在{v}工作", "User works at {v}"),
    "user.school": ("用户在{v}上学", "User studies at {v}"),
    "user.likes": ("用户喜欢{v}", "User likes {v}"),
    "user.dislikes": ("用户不喜欢{v}", "User dislikes {v}"),
    "user.allergy": ("用户对{v}过敏", "User is allergic to {v}"),
    "user.diet": ("用户的饮食：{v}", "User's diet: {v}"),
    "user.pet": ("用户养了{v}", "User has a pet: {v}"),
    "user.family": ("用户的家人：{v}", "User's family: {v}"),
    "user.birthday": ("用户的生日是{v}", "User's birthday is {v}"),
    "user.device": ("用户使用{v}", "User uses {v}"),
    "user.plan": ("用户打算{v}", "User plans to {v}"),
    "user.sport": ("用户的运动：{v}", "User does sport: {v}"),
}

UPCOMING = re.compile(
    r"(?:下个?月|下周|下星期|明年|年底|过几天|以后|将来|打算|准备|计划|要|快|将|会)搬"
    r"|\b(?:moving|relocating|will move|going to move|plan(?:ning)? to move) to\b",
    re.IGNORECASE,
)
"""A move still to come: "我下个月搬去成都" says where the user will live, not
where they live, so its record says so (the key is still ``user.location``,
and the move supersedes the old city)."""

MOVING = ("用户要搬去{v}", "User is moving to {v}")
"""The record text of an upcoming move."""

# ----------------------------------------------------------------- Chinese
_V = r"(?P<v>[^，。！？；、,.!?;\s]{1,16}?)"  # a short value, lazily
_Z_ADV = r"(?:现在|目前|一直|也|还|已经|其实|今年|平时|刚)?"
_ANIMALS = (
    "猫|狗|柯基|金毛|泰迪|哈士奇|柴犬|边牧|拉布拉多|布偶|英短|美短|橘猫|仓鼠|兔子|兔|"
    "鹦鹉|金鱼|鱼|乌龟|龟|蜥蜴|刺猬|龙猫|荷兰猪|小狗|小猫"
)
_KIN = (
    "女儿|儿子|孩子|小孩|老婆|老公|妻子|丈夫|太太|先生|男朋友|女朋友|对象|未婚夫|未婚妻|"
    "哥哥|姐姐|弟弟|妹妹|双胞胎"
)
_JOB_END = (
    "师|员|生|家|经理|老师|医生|护士|律师|会计|设计|作家|记者|司机|厨师|警察|主管|总监|"
    "老板|研究员|博士|教授|程序员|工程师|店主|创业者|自由职业者|产品经理|销售|主播|演员"
)
NOT_SELF = "妈|爸|父|母|朋友|同事|哥|姐|弟|妹|老婆|老公|孩子|儿子|女儿|男朋友|女朋友|同学|室友"

ZH: list[tuple[str, str, re.Pattern[str]]] = [
    (k, op, re.compile(p))
    for k, op, p in [
        ("user.name", "add", r"^我叫" + _V + r"$"),
        ("user.name", "add", r"我的名字(?:是|叫)" + _V + r"$"),
        ("user.name", "add", r"^(?:大家|朋友们|别人)?都?叫我" + _V + r"(?:就行|就好)?$"),
        ("user.location", "delete", r"^我" + _Z_ADV + r"(?:不再|不)住在?" + _V + r"了$"),
        (
            "user.location",
            "add",
            r"^我(?:们|们家|家)?" + _Z_ADV + r"(?:住在|住|定居在|生活在)" + _V + r"$",
        ),
        (
            "user.location",
            "add",
            r"^我(?:们|们家|家)?" + _Z_ADV + r"在" + _V + r"(?:定居|安家|生活)$",
        ),
        ("user.location", "add", r"^我家在" + _V + r"$"),
        (
            "user.location",
            "add",
            r"^(?:.{0,6})?我(?:们|们家)?"
            + _Z_ADV
            + r".{0,4}?(?:要|准备)?搬(?:到|去|回)了?"
            + _V
            + r"(?:了|住|去)?$",
        ),
        (
            "user.location",
            "add",
            r"^(?:下个月|明年|年底|下周|去年|上个月)我(?:们|们家)?要?搬(?:到|去|回)了?"
            + _V
            + r"(?:了)?$",
        ),
        (
            "user.employer",
            "delete",
            r"^我" + _Z_ADV + r"(?:不在|不再在)" + _V + r"(?:工作|上班|实习)了$",
        ),
        (
            "user.employer",
            "add",
            r"^我" + _Z_ADV + r"在(?!一家|家)" + _V + r"(?:工作|上班|实习|任职)$",
        ),
        ("user.employer", "add", r"^(?:我)?" + _Z_ADV + r"在(?!一家|家)" + _V + r"(?:上班|工作)$"),
        ("user.employer", "add", r"^我" + _Z_ADV + r"在(?!一家|家)" + _V + r"(?:做|当)"),
        ("user.job", "add", r"^我" + _Z_ADV + r"在.{1,12}?(?:做|当)(?P<v>[^，。！？]{1,10}?)$"),
        (
            "user.job",
            "add",
            r"^我"
            + _Z_ADV
            + r"是(?:一名|一个|一位|个|名)?(?P<v>[^，。！？的]{0,8}(?:"
            + _JOB_END
            + r"))$",
        ),
        ("user.job", "add", r"^我的(?:职业|工作)是" + _V + r"$"),
        ("user.job", "add", r"^我" + _Z_ADV + r"是做" + _V + r"的$"),
        (
            "user.job",
            "add",
            r"^我" + _Z_ADV + r"(?:当|做)(?P<v>[^，。！？]{1,8}(?:" + _JOB_END + r"))$",
        ),
        (
            "user.school",
            "add",
            r"在(?P<v>[^，。！？]{1,12}?(?:大学|学院|中学|小学|高中|一中|二中|三中|四中|学校))(?:读|上|念|学习|读书)",
        ),
        ("user.school", "add", r"^我是(?P<v>[^，。！？]{1,12}?(?:大学|学院|中学|高中))毕业的$"),
        ("user.school", "add", r"毕业于(?P<v>[^，。！？]{1,12}?(?:大学|学院|中学|高中))"),
        ("user.likes", "delete", r"^我" + _Z_ADV + r"(?:不再喜欢|不喜欢|不爱)" + _V + r"了$"),
        (
            "user.dislikes",
            "add",
            r"^我"
            + _Z_ADV
            + r"(?:很|特别|非常|最|真的)?(?:不喜欢|讨厌|不爱|受不了|怕)"
            + _V
            + r"$",
        ),
        (
            "user.likes",
            "add",
            r"^我"
            + _Z_ADV
            + r"(?:很|特别|非常|最|超|挺|真的)?(?:喜欢|爱|热爱|迷上了)(?!你)"
            + _V
            + r"$",
        ),
        ("user.likes", "add", r"^我最喜欢的[^是，。]{1,6}是" + _V + r"$"),
        ("user.allergy", "delete", r"^我" + _Z_ADV + r"(?:对)?" + _V + r"不过敏了$"),
        ("user.allergy", "delete", r"^我" + _Z_ADV + r"不再对" + _V + r"过敏了?$"),
        ("user.allergy", "add", r"^我" + _Z_ADV + r"对" + _V + r"(?:过敏|不耐受)$"),
        ("user.allergy", "add", r"^我(?!" + NOT_SELF + r")" + _V + r"过敏$"),
        ("user.diet", "delete", r"^我" + _Z_ADV + r"(?:不再吃|不吃)(?P<v>素)了$"),
        ("user.diet", "add", r"^我" + _Z_ADV + r"(?:只)?吃(?P<v>素)$"),
        ("user.diet", "add", r"^我" + _Z_ADV + r"是(?P<v>素食)(?:主义)?者?$"),
        ("user.diet", "add", r"^我" + _Z_ADV + r"(?P<v>不吃[^，。！？]{1,8})$"),
        ("user.pet", "delete", r"^我" + _Z_ADV + r"不养(?P<v>" + _ANIMALS + r"|宠物)了$"),
        (
            "user.pet",
            "add",
            r"^我(?:家)?"
            + _Z_ADV
            + r"养了?(?:一|两|三|几|\d+)?(?:只|条|个|匹|头)?(?P<v>[^，。！？]{1,6})$",
        ),
        (
            "user.pet",
            "add",
            r"^我(?:家)?" + _Z_ADV + r"有(?:一|两|三|几|\d+)(?:只|条|匹)(?P<v>" + _ANIMALS + r")$",
        ),
        (
            "user.family",
            "add",
            r"^我" + _Z_ADV + r"有(?:一|两|三|四|\d+)?(?:个|位)?(?P<v>" + _KIN + r")",
        ),
        ("user.family", "add", r"^我的?(?P<v>" + _KIN + r")(?:是|叫|在)"),
        ("user.birthday", "add", r"^我的?生日(?:是|在)?" + _V + r"$"),
        ("user.birthday", "add", r"^我是?(?P<v>[\d一二三四五六七八九〇零]{4}年)出生的?$"),
        (
            "user.device",
            "add",
            r"^我(?:现在)?用的?(?:是)?(?P<v>(?:iPhone|iPad|MacBook|Mac|小米|华为|三星|ThinkPad|联想|戴尔|荣耀|OPPO|vivo|Pixel)[^，。！？]{0,12})$",
        ),
        (
            "user.device",
            "add",
            r"^我的?(?:手机|电脑|笔记本|平板)(?:是|用的是)(?:一台|一部)?" + _V + r"$",
        ),
        (
            "user.plan",
            "add",
            r"^我"
            + _Z_ADV
            + r"(?:打算|准备|计划|想要|想|要)(?:在)?(?:明年|下周|下个月|今年|年底|周末)?(?:开始)?(?P<v>(?:去|学|考|开始|买|换|报|参加|做)[^，。！？]{1,14})$",
        ),
        (
            "user.plan",
            "add",
            r"^我(?:下周|下个月|明年|周末|明天)(?:要|准备|打算)(?P<v>去[^，。！？]{1,14})$",
        ),
    ]
]

# ----------------------------------------------------------------- English
_E = r"(?P<v>[A-Za-z0-9][\w'&. -]{0,40}?)"
_E_END = (
    r"(?=\s+(?:with|in|at|for|since|last|next|this|from|because|and|but|now|anymore|"
    r"again)\b|$)"
)
_CAP = r"(?-i:(?P<v>[A-Z][\w&.'-]*(?:\s+(?:of\s+)?[A-Z0-9][\w&.'-]*)*))"
_JOBS = (
    "engineer|developer|programmer|nurse|teacher|doctor|manager|designer|accountant|lawyer|"
    "student|scientist|writer|journalist|chef|driver|consultant|analyst|researcher|professor|"
    "architect|pharmacist|dentist|artist|musician|photographer|editor|librarian|electrician|"
    "plumber|mechanic|firefighter|officer|freelancer|entrepreneur|founder|intern|therapist"
)
_PETS = (
    "dogs?|cats?|puppy|kitten|rabbits?|bunny|hamsters?|parrots?|fish|goldfish|turtles?|"
    "snakes?|lizards?|guinea pigs?|horses?|ferrets?|corgi|labrador|retriever|poodle|beagle|"
    "greyhound|husky|terrier|bulldog|dachshund|spaniel|shepherd|pug|chihuahua|budgies?|"
    "chinchillas?|tortoises?|geckos?|axolotls?|cockatiels?|mice|rats?"
)
_FAMILY = (
    "daughters?|sons?|kids|children|child|wife|husband|partner|boyfriend|girlfriend|"
    "fiancée?|twins|baby|brothers?|sisters?"
)
_DEVICES = (
    r"(?:iPhone|iPad|MacBook|iMac|Mac|Pixel|Galaxy|ThinkPad|Surface|Kindle|Nintendo|"
    r"PlayStation|Xbox|Chromebook|Dell|Lenovo|Android|Windows)[\w .-]{0,20}?"
)
_I_AM = r"(?:i'm|i am|im)"
_NOT_NAMES = (
    "sorry|fine|good|okay|ok|here|back|done|tired|sure|not|so|just|also|very|really|"
    "happy|glad|from|new|looking|trying|going|planning|moving|allergic|married|vegan|"
    "vegetarian|based|still|currently|now|interested|thinking|working|no|the|a|an"
)

_CASED = frozenset({"user.name"})

EN: list[tuple[str, str, re.Pattern[str]]] = [
    (k, op, re.compile(p, re.IGNORECASE if k not in _CASED else 0))
    for k, op, p in [
        ("user.name", "add", r"(?i:\bmy name is )" + _CAP),
        (
            "user.name",
            "add",
            r"^(?i:hi|hello|hey)?[, ]*(?i:i'm|i am) (?!(?i:"
            + _NOT_NAMES
            + r")\b)(?P<v>[A-Z][a-z]+)(?=[,.!]|$| and\b| here\b)",
        ),
        ("user.name", "add", r"(?i:\b(?:call me|people call me) )" + _CAP),
        ("user.location", "delete", r"\bi (?:no longer|don't|do not) live in " + _E + _E_END),
        (
            "user.location",
            "add",
            r"\b(?:i|we) (?:currently |now |still |also )?live in " + _E + _E_END,
        ),
        ("user.location", "add", r"\b" + _I_AM + r" (?:currently |now )?based in " + _E + _E_END),
        (
            "user.location",
            "add",
            r"\b(?:i|we)(?:'re| are|'m| am| have| just| recently|'ve)*(?: just)? (?:moved|moving|relocating|relocated) to "
            + _E
            + _E_END,
        ),
        (
            "user.employer",
            "delete",
            r"\bi (?:don't|do not|no longer) work (?:at|for) " + _E + _E_END,
        ),
        ("user.employer", "add", r"\bi (?:currently |now |still )?work (?:at|for) " + _CAP),
        ("user.employer", "add", r"\b(?:new )?job at " + _CAP),
        (
            "user.employer",
            "add",
            r"\b" + _I_AM + r" (?:a|an) [\w -]{0,30}?(?:" + _JOBS + r") at " + _CAP,
        ),
        ("user.job", "add", r"\b" + _I_AM + r" (?:a|an) (?P<v>[\w -]{0,30}?(?:" + _JOBS + r"))\b"),
        ("user.job", "add", r"\bi work as (?:a|an) (?P<v>[\w -]{1,40}?)" + _E_END),
        ("user.school", "add", r"\bi (?:study|studied|go to school) at (?:the )?" + _CAP),
        ("user.school", "add", r"\b(?:graduated|graduate) from (?:the )?" + _CAP),
        ("user.school", "add", r"\bstudent at (?:the )?" + _CAP),
        ("user.likes", "delete", r"\bi (?:don't|do not) (?:like|love|enjoy) " + _E + r" anymore"),
        (
            "user.dislikes",
            "add",
            r"\bi (?:really )?(?:hate|dislike|can't stand|cannot stand|don't like|do not like) (?!it\b|that\b|this\b)"
            + _E
            + r"(?=[.!,]|$)",
        ),
        (
            "user.likes",
            "add",
            r"\bi (?:really |absolutely |also |just )?(?:love|like|enjoy|adore) (?!to\b|it\b|that\b|this\b|you\b)"
            + _E
            + r"(?=[.!,]|$)",
        ),
        (
            "user.likes",
            "add",
            r"\b" + _I_AM + r" (?:a )?(?:big |huge )?fan of " + _E + r"(?=[.!,]|$)",
        ),
        ("user.likes", "add", r"\bmy fav(?:ou?rite) \w+ is " + _E + r"(?=[.!,]|$)"),
        (
            "user.allergy",
            "delete",
            r"\b" + _I_AM + r" (?:not|no longer) allergic to " + _E + _E_END,
        ),
        (
            "user.allergy",
            "add",
            r"\b" + _I_AM + r" (?:also |very |severely )?allergic to " + _E + _E_END,
        ),
        ("user.allergy", "add", r"\bi have (?:a|an) (?P<v>[\w-]{2,20}) allergy"),
        ("user.allergy", "add", r"\b" + _I_AM + r" (?P<v>lactose|gluten) intolerant"),
        (
            "user.diet",
            "delete",
            r"\b" + _I_AM + r" (?:not|no longer) (?:a )?(?P<v>vegetarian|vegan|pescatarian)",
        ),
        ("user.diet", "add", r"\b" + _I_AM + r" (?:a )?(?P<v>vegetarian|vegan|pescatarian)\b"),
        ("user.diet", "add", r"\bi (?:keep|eat) (?P<v>kosher|halal)\b"),
        ("user.diet", "add", r"\bi (?P<v>(?:don't|do not) eat [\w -]{1,20}?)(?=[.!,]|$)"),
        (
            "user.pet",
            "add",
            r"\b(?:i|we)(?:'ve| have)? (?:have|own|adopted|got|rescued) (?:a|an|two|three|four|\d+) (?:\w+ )?(?P<v>"
            + _PETS
            + r")\b",
        ),
        (
            "user.family",
            "add",
            r"\bi have (?:a|an|one|two|three|four|\d+) (?P<v>" + _FAMILY + r")\b",
        ),
        ("user.family", "add", r"\bmarried with (?:\w+ )?(?P<v>kids|children)\b"),
        ("user.family", "add", r"\bmy (?P<v>" + _FAMILY + r") (?:is|works|lives)\b"),
        ("user.family", "add", r"\bwith my (?P<v>" + _FAMILY + r")\b"),
        ("user.birthday", "add", r"\bmy birthday is (?:on )?(?P<v>[\w ,]{3,20}?)(?=[.!]|$)"),
        ("user.birthday", "add", r"\bi was born (?:on|in) (?P<v>[\w ,]{3,20}?)(?=[.!]|$| in\b)"),
        (
            "user.device",
            "add",
            r"\bi (?:use|have|got|bought|own) (?:a|an|my)? ?(?P<v>" + _DEVICES + r")" + _E_END,
        ),
        (
            "user.device",
            "add",
            r"\bmy (?:phone|laptop|computer|tablet) is (?:a |an )?(?P<v>[\w .-]{2,20}?)(?=[.!,]|$)",
        ),
        (
            "user.plan",
            "add",
            r"\b"
            + _I_AM
            + r" (?:planning|going|hoping) to (?!be\b)(?P<v>[\w ]{2,40}?)(?=\s+(?:next|this|in|on|by|soon)\b|[.!,]|$)",
        ),
        (
            "user.plan",
            "add",
            r"\bi (?:plan|want|intend|hope|would like|'d like) to (?P<v>[\w ]{2,40}?)(?=\s+(?:next|this|in|on|by|soon)\b|[.!,]|$)",
        ),
    ]
]

QUESTION = re.compile(
    r"[?？]|吗|呢$|什么|怎么|哪|几|多少|为什么|如果|要是|假如|^(?:if|what|how|why|which|who|"
    r"where|when|do|does|is|are|can|could|should|would)\b",
    re.IGNORECASE,
)
"""A clause that asks or supposes states nothing about the user."""

CLAUSE = re.compile(
    r"[，。！；,!;]|(?<![0-9])\.(?![0-9])|\s+but\s+|\s+and\s+(?=i\b)", re.IGNORECASE
)

# ------------------------------------------------ changes, pets, diet, sport
_Z_DEV = (
    r"(?P<v>(?:iPhone|iPad|MacBook|Mac|小米|红米|Redmi|华为|荣耀|三星|ThinkPad|联想|戴尔|"
    r"OPPO|vivo|一加|Pixel|Surface|Galaxy|Kindle)[^，。！？]{0,14})"
)
_Z_WHEN = r"(?:上周|上个月|最近|前几天|昨天|刚刚?|新|今年)?"
_Z_SPORT = (
    "篮球|足球|羽毛球|网球|乒乓球|排球|棒球|高尔夫|台球|壁球|跑步|慢跑|游泳|攀岩|骑车|骑行|"
    "滑雪|瑜伽|健身|徒步|冲浪|拳击|跳舞|普拉提|划船|滑板|太极拳?|马拉松"
)
ZH += [
    (k, op, re.compile(p))
    for k, op, p in [
        (
            "user.device",
            "add",
            r"^我?" + _Z_ADV + _Z_WHEN + r"(?:把)?(?:手机|电脑|笔记本|平板)?"
            r"(?:换了|换成了?|换到|新买了|买了|入手了)(?:一台|一部|一个|个|台|部)?(?:新的?)?"
            r"(?:手机|电脑|笔记本|平板)?" + _Z_DEV + r"$",
        ),
        (
            "user.pet",
            "add",
            r"^我(?:们)?(?:家)?" + _Z_ADV + _Z_WHEN + r"(?:有|来了|领养了|收养了|捡了)"
            r"(?:一|两|三|几|\d+)?(?:只|条|匹)(?P<v>" + _ANIMALS + r")",
        ),
        (
            "user.diet",
            "add",
            r"^我" + _Z_ADV + _Z_WHEN + r"(?:从[^，。]{1,6}?)?(?:开始|改|改为|转为|转成|在|正在)"
            r"(?:吃)?(?P<v>素|素食|生酮饮食|生酮|轻断食|低碳水饮食|低碳饮食|地中海饮食|无麸质饮食)了?$",
        ),
        (
            "user.sport",
            "add",
            r"^我"
            + _Z_ADV
            + r"(?:每周|每天|每个?周末|周末|经常|平时|每天早上|早上|晚上|每晚|偶尔|最近)?"
            r"(?:都|会|也|常)?(?:去)?(?:打|踢|练|玩|做)?(?:[一两三四五六七八九十\d]+次)?(?P<v>"
            + _Z_SPORT
            + r")",
        ),
    ]
]
_E_SPORT_PLAY = (
    "tennis|football|soccer|basketball|volleyball|badminton|golf|squash|hockey|baseball|"
    "cricket|rugby|table tennis|ping pong|pickleball|padel"
)
_E_SPORT_GO = (
    "running|swimming|climbing|bouldering|cycling|hiking|skiing|surfing|jogging|rowing|"
    "skating|snowboarding|kayaking"
)
_E_SPORT_DO = "yoga|pilates|crossfit|karate|judo|boxing|taekwondo|tai chi|kickboxing"
EN += [
    (k, op, re.compile(p, re.IGNORECASE))
    for k, op, p in [
        (
            "user.device",
            "add",
            r"\bi(?:'ve| have)? (?:just |recently )?(?:switched|upgraded|changed|moved) to "
            r"(?:a |an |the )?(?P<v>" + _DEVICES + r")" + _E_END,
        ),
        (
            "user.device",
            "add",
            r"\bi(?:'ve| have)? (?:just )?replaced my (?:old )?(?:phone|laptop|computer|tablet) "
            r"with (?:a |an )?(?P<v>[\w .-]{2,20}?)(?=[.!,]|$| last\b| this\b)",
        ),
        ("user.pet", "add", r"^my (?:\w+ )?(?P<v>" + _PETS + r")\b(?!'s? (?:food|allergy))"),
        (
            "user.diet",
            "add",
            r"\bi(?:'ve| have)? (?:went|gone|become|became|turned|started eating) (?:a |an )?"
            r"(?P<v>vegetarian|vegan|pescatarian|plant-based)\b",
        ),
        ("user.diet", "add", r"\b" + _I_AM + r" (?:now )?on an? (?P<v>[\w-]{2,20}) diet\b"),
        ("user.diet", "add", r"\bi switched to an? (?P<v>[\w-]{2,20}) diet\b"),
        ("user.sport", "add", r"\bi (?:play|played) (?P<v>" + _E_SPORT_PLAY + r")\b"),
        ("user.sport", "add", r"\bi (?:go|went) (?P<v>" + _E_SPORT_GO + r")\b"),
        ("user.sport", "add", r"\bi (?:do|practi[cs]e) (?P<v>" + _E_SPORT_DO + r")\b"),
    ]
]

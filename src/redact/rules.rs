//! The rule catalogue, as data: what each rule matches, the keywords that let the
//! prefilter wake it, and the examples its unit test runs alone and embedded in text.
//!
//! Examples are templates so that no token-shaped literal sits in the source: `‹a36›` is
//! 36 random alphanumerics, drawn fresh by the test from a fixed seed (see `expand`), and
//! `⟦…⟧` marks the secret inside a context example. A positive without `⟦⟧` is a secret
//! in its entirety. Negatives must come out byte for byte identical.
//!
//! Token patterns are ASCII byte regexes. When a pattern has a group named `s`, only that
//! group is replaced; otherwise the whole match is.

pub use super::gate::Gate;

/// How a rule finds its matches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Matcher {
    /// A provider token format, found by regex anywhere in a line.
    Token(&'static str),
    /// A context rule, implemented by one of the engines in `scan.rs` and `shell.rs`.
    Context(Engine),
}

/// The code that implements a family of context rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Engine {
    /// The shell lexer: flags, per-command short flags, stdin, positional secrets.
    Shell,
    /// `name=value` in any text: assignments, `--flag=value`, query strings, DSNs.
    Equals,
    /// `name: value` (YAML, JSON, HTTP headers).
    Colon,
    /// `scheme://user:password@host`.
    Url,
    /// `Authorization:` headers.
    Header,
    /// `Cookie:` headers.
    Cookie,
    /// PEM private-key blocks, also on one line with literal `\n`.
    Pem,
    /// `AWS Secret Access Key [None]: …` as `aws configure` prints it.
    AwsPrompt,
    /// A key's partner: the secret that sits beside a provider's public id on one line
    /// (an AWS access key id and its secret in a CSV row or a pasted pair).
    Partner,
    /// `.netrc`: `machine … login … password X`.
    Netrc,
    /// PHP's `define('DB_PASSWORD', 'x')`.
    PhpDefine,
    /// A secret given in words: "the staging db password is X".
    Prose,
    /// An XML element named like a secret: `<password>X</password>`.
    Xml,
    /// A secret's name and value as two keys of one entry: `{name: DB_PASSWORD, value: X}`.
    Pair,
    /// A database's password as its SQL, shell or configuration sets it (`CREATE USER …
    /// PASSWORD 'x'`, `IDENTIFIED BY 'x'`, `sqlplus user/x@db`, Redis's `AUTH x`,
    /// MongoDB's `pwd: "x"`).
    Database,
    /// A literal a generator made, standing alone as an argument or an element.
    Generated,
    /// A wallet's recovery phrase: BIP-39 words standing as a whole value.
    Mnemonic,
    /// strongSwan's `ipsec.secrets`: `[selectors] : PSK "x"`.
    Ipsec,
    /// A Redis ACL user: `user app on >x ~* +@all`.
    RedisAcl,
}

/// One rule of the catalogue.
#[derive(Debug)]
pub struct Rule {
    /// Stable id, shown by `--explain` and in snapshot summaries.
    pub id: &'static str,
    /// What it catches, for people.
    pub what: &'static str,
    /// Literal keywords; a line with none of any rule's keywords is never scanned.
    /// Matched case-sensitively; context rules' keywords are also tried in upper case
    /// and capitalised.
    pub keywords: &'static [&'static str],
    pub matcher: Matcher,
    /// What must surround a keyword for it to wake the rule (see `gate.rs`).
    pub gate: Gate,
    /// Examples that must be redacted (templates, see the module documentation).
    pub positives: &'static [&'static str],
    /// Examples that must come out unchanged.
    pub negatives: &'static [&'static str],
}

/// Name fragments that wake the assignment, flag and `key: value` rules.
const NAME_WORDS: &[&str] = &[
    "pass", "pwd", "token", "secret", "key", "auth", "private", "cred", "session", "signing", "psk", "sig",
    "cookie", "bearer", "jwt", "salt", "dsn", "sid",
];

/// [`NAME_WORDS`] and the names under which a URL's query takes an application's key by
/// the name of its id (OpenWeatherMap's and Wolfram|Alpha's `appid`).
const QUERY_WORDS: &[&str] = &[
    "pass", "pwd", "token", "secret", "key", "auth", "private", "cred", "session", "signing", "psk", "sig",
    "cookie", "bearer", "jwt", "salt", "dsn", "sid", "appid", "app_id",
];

macro_rules! token {
    ($id:literal, $what:literal, [$($kw:literal),+], $re:literal, [$($p:literal),*], [$($n:literal),*]) => {
        Rule {
            id: $id,
            what: $what,
            keywords: &[$($kw),+],
            matcher: Matcher::Token($re),
            gate: Gate::Token,
            positives: &[$($p),*],
            negatives: &[$($n),*],
        }
    };
}

pub static RULES: &[Rule] = &[
    token!(
        "github-token",
        "GitHub classic, OAuth, user, server and refresh tokens",
        ["ghp_", "gho_", "ghu_", "ghs_", "ghr_"],
        r"\bgh[pousr]_[A-Za-z0-9]{36,251}\b",
        ["ghp_‹a36›", "gho_‹a36›", "ghs_‹a36›", "ghr_‹a76›"],
        ["ghp_", "see ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx in the docs", "ghp_short123"]
    ),
    token!(
        "github-fine-grained",
        "GitHub fine-grained personal access tokens",
        ["github_pat_"],
        r"\bgithub_pat_[A-Za-z0-9]{20,}_[A-Za-z0-9]{50,}\b",
        ["github_pat_‹a22›_‹a59›"],
        ["github_pat_", "grep github_pat_ -r ."]
    ),
    token!(
        "gitlab-token",
        "GitLab personal, deploy, runner, trigger and feed tokens",
        ["glpat-", "gldt-", "glrt-", "glptt-", "glft-", "glsoat-", "glcbt-", "glimt-", "glagent-", "gloas-"],
        r"\bgl(?:pat|dt|rt|ptt|ft|soat|cbt|imt|agent|oas)-[A-Za-z0-9_\-]{20,300}(?:\.[0-9a-z]{2}\.[0-9a-z]{7})?",
        ["glpat-‹u20›", "glrt-‹u20›", "glptt-‹h40›", "glpat-‹u36›.01.‹l7›"],
        ["glpat-", "rm glpat-notes.md"]
    ),
    token!(
        "slack-token",
        "Slack bot, user, app-level and config tokens",
        ["xoxb-", "xoxp-", "xoxa-", "xoxo-", "xoxs-", "xoxr-", "xoxe-", "xoxe.", "xapp-"],
        r"\bxox[abposre](?:\.xox[a-z])?-[0-9A-Za-z]{1,}-[0-9A-Za-z\-]{10,}|\bxapp-\d-[A-Z0-9]{8,}-\d{6,}-[a-f0-9]{32,}",
        ["xoxb-‹d12›-‹d13›-‹a24›", "xoxp-‹d12›-‹d12›-‹d13›-‹h32›", "xapp-1-A‹A10›-‹d13›-‹h64›"],
        ["xoxb-", "the xoxb- prefix"]
    ),
    token!(
        "fernet-token",
        "Fernet tokens (version 0x80 and a timestamp: gAAAAAB…), as OpenStack Keystone issues them",
        ["gAAAAAB"],
        r"\bgAAAAAB[A-Za-z0-9_-]{60,}={0,2}",
        ["gAAAAAB‹u120›", "gAAAAAB‹u180›=="],
        ["gAAAAAB", "the gAAAAAB prefix of a Fernet token"]
    ),
    token!(
        "backblaze-key",
        "Backblaze B2 application keys (K00 and a version digit, 27 more characters)",
        ["K00"],
        r"\bK00[1-9][A-Za-z0-9+/]{27}\b",
        ["K005‹a27›", "K001‹a27›"],
        ["K00", "K0012", "the K005 prefix of an application key"]
    ),
    token!(
        "k3s-token",
        "k3s cluster join tokens (K10, the CA's hash, then a user and its password)",
        ["K10"],
        r"\bK10[0-9a-f]{32,}::[a-z][a-z0-9_-]*:[0-9A-Za-z]{16,}",
        ["K10‹h64›::server:‹h32›", "K10‹h64›::node:‹a24›"],
        ["K10", "the K10 is a camera", "K10abc::server:x"]
    ),
    token!(
        "mapbox-secret-token",
        "Mapbox secret access tokens (sk.; the public pk. ones are left)",
        ["sk.eyJ"],
        r"\bsk\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{16,}",
        ["sk.eyJ‹u40›.‹u22›"],
        ["pk.eyJ‹u40›.‹u22›", "sk.eyJ"]
    ),
    token!(
        "anaconda-channel-token",
        "Anaconda channel tokens in a channel URL (conda.anaconda.org/t/TOKEN/…)",
        ["anaconda.org/t/", "anaconda.com/t/"],
        r"anaconda\.(?:org|com)/t/(?P<s>[A-Za-z0-9-]{20,})",
        ["https://conda.anaconda.org/t/⟦‹l2›-‹l8›-‹l4›-‹l4›-‹l4›-‹l12›⟧/acme"],
        ["https://conda.anaconda.org/conda-forge", "anaconda.org/t/"]
    ),
    token!(
        "slack-webhook",
        "Slack incoming-webhook URLs (the path is the secret)",
        ["hooks.slack.com"],
        r"hooks\.slack\.com/(?:services|workflows|triggers)/(?P<s>[A-Za-z0-9+/_\-]{20,})",
        ["curl -X POST https://hooks.slack.com/services/⟦T‹A8›/B‹A10›/‹a24›⟧ -d @msg.json"],
        ["open https://hooks.slack.com/services/"]
    ),
    token!(
        "discord-webhook",
        "Discord webhook URLs (the last path segment is the secret)",
        ["discord.com/api/webhooks/", "discordapp.com/api/webhooks/"],
        r"discord(?:app)?\.com/api/webhooks/\d{5,30}/(?P<s>[A-Za-z0-9_\-]{40,120})",
        ["curl -d @m.json https://discord.com/api/webhooks/‹d19›/⟦‹u68›⟧"],
        ["https://discord.com/api/webhooks/123/short"]
    ),
    token!(
        "teams-webhook",
        "Microsoft Teams incoming-webhook URLs (the segment after IncomingWebhook is the secret)",
        ["/IncomingWebhook/"],
        r"\.office\.com/webhook(?:b2)?/[^\s/]+/IncomingWebhook/(?P<s>[0-9a-f]{32})",
        [
            "curl -d x https://acme.webhook.office.com/webhookb2/‹h8›-‹h4›-‹h4›-‹h4›-‹h12›@‹h8›-‹h4›-‹h4›-‹h4›-‹h12›/IncomingWebhook/⟦‹h32›⟧/‹h8›-‹h4›-‹h4›-‹h4›-‹h12›"
        ],
        ["https://acme.webhook.office.com/webhookb2/x/IncomingWebhook/"]
    ),
    token!(
        "ifttt-webhook",
        "IFTTT Maker webhook keys in a trigger URL",
        ["maker.ifttt.com/"],
        r"maker\.ifttt\.com/(?:trigger/[^\s/]+/(?:json/)?with/key|use)/(?P<s>[A-Za-z0-9_\-]{16,64})",
        ["curl https://maker.ifttt.com/trigger/door/with/key/⟦‹u22›⟧"],
        ["https://maker.ifttt.com/trigger/door/with/key/"]
    ),
    token!(
        "node-provider-url",
        "blockchain node providers' endpoint URLs whose path is the API key (Alchemy /v2/, Infura /v3/, QuickNode)",
        ["alchemy.com/v2/", "alchemyapi.io/v2/", "infura.io/v3/", "infura.io/ws/v3/", "quiknode.pro/"],
        r"(?:\.alchemy\.com/v2|\.alchemyapi\.io/v2|\.infura\.io/(?:ws/)?v3|\.quiknode\.pro)/(?P<s>[A-Za-z0-9_\-]{32,64})",
        [
            "RPC_URL=https://eth-sepolia.g.alchemy.com/v2/⟦‹u32›⟧",
            "https://mainnet.infura.io/v3/⟦‹h32›⟧",
            "wss://polygon-mainnet.infura.io/ws/v3/⟦‹h32›⟧"
        ],
        ["https://eth-mainnet.g.alchemy.com/v2/", "https://docs.alchemy.com/v2/reference"]
    ),
    token!(
        "stripe-key",
        "Stripe secret and restricted keys",
        ["sk_live_", "sk_test_", "rk_live_", "rk_test_"],
        r"\b[rs]k_(?:live|test)_[0-9A-Za-z]{20,247}\b",
        ["sk_live_‹a24›", "rk_live_‹a99›", "sk_test_‹a99›"],
        ["pk_live_‹a24›", "sk_test_"]
    ),
    token!(
        "stripe-webhook-secret",
        "Stripe webhook signing secrets",
        ["whsec_"],
        r"\bwhsec_[A-Za-z0-9+/=]{32,}",
        ["whsec_‹a32›"],
        ["whsec_"]
    ),
    token!(
        "openai-key",
        "OpenAI project, service-account, admin and legacy keys; other sk- keys",
        ["sk-"],
        r"\bsk-(?:proj|svcacct|admin|None)-[A-Za-z0-9_\-]{20,}|\bsk-or-v1-[a-f0-9]{64}\b|\bsk-[A-Za-z0-9]{20}T3BlbkFJ[A-Za-z0-9]{20}\b|\bsk-[A-Za-z0-9]{32,}\b",
        ["sk-proj-‹u48›T3BlbkFJ‹u48›", "sk-‹a20›T3BlbkFJ‹a20›", "sk-svcacct-‹u64›", "sk-‹h32›"],
        ["pip install sk-video-processing-toolkit", "cd sk-learn", "sk-"]
    ),
    token!(
        "anthropic-key",
        "Anthropic API and admin keys",
        ["sk-ant-"],
        r"\bsk-ant-(?:api|admin|oat|ort|sid)\d{2}-[A-Za-z0-9_\-]{20,}",
        ["sk-ant-api03-‹u93›AA", "sk-ant-admin01-‹u93›AA"],
        ["sk-ant-", "see sk-ant-api03-…"]
    ),
    token!(
        "aws-access-key-id",
        "AWS access key ids (long-term and temporary)",
        ["AKIA", "ASIA", "ABIA", "ACCA"],
        r"\b(?:AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{16}\b",
        ["AKIA‹B16›", "ASIA‹B16›"],
        ["AKIAIOSFODNN7EXAMPLE", "ASIAN markets"]
    ),
    token!(
        "password-hash",
        "password hashes in crypt(3) formats (bcrypt, Apache MD5, SHA-crypt, yescrypt), as htpasswd and shadow files hold them",
        ["$2y$", "$2b$", "$2a$", "$apr1$", "$6$", "$5$", "$1$", "$y$"],
        r"\$(?:2[aby]\$\d{2}\$[./A-Za-z0-9]{53}|apr1\$[./A-Za-z0-9]{1,8}\$[./A-Za-z0-9]{22}|[156]\$(?:rounds=\d{1,9}\$)?[./A-Za-z0-9]{1,16}\$[./A-Za-z0-9]{22,86}|y\$[./A-Za-z0-9]{1,8}\$[./A-Za-z0-9]{1,64}\$[./A-Za-z0-9]{43})",
        [
            "admin:⟦$2y$05$9wk5rJP7XYKwWzN49F7NUannX4gQpEZmysYnfQjCr17dr0mKT6/fU⟧",
            "metrics:⟦$apr1$Kl73Aa1m$wFMip1BSE9ZBslEO06GSdL⟧",
            "root:⟦$6$Zq8rT5wL$Xk2mQ9vR4tL8nB3zH6jF1dS5aG0pYeU2iO7wXkM3nB5vC8xZ1aS4dF7gH0jK3lQ6wE9rT2yU5iO8pA1sD4fG7h⟧:19000:0:99999:7:::"
        ],
        ["echo $1$ and $2", "awk '{print $1}'", "s/$1$/x/", "printf '%s' \"$6$\""]
    ),
    token!(
        "aws-session-token",
        "AWS STS session tokens",
        ["IQoJb3JpZ2luX2Vj", "FwoGZXIvYXdz"],
        r"\b(?:IQoJb3JpZ2luX2Vj|FwoGZXIvYXdz)[A-Za-z0-9+/=]{100,}",
        ["IQoJb3JpZ2luX2Vj‹b300›", "FwoGZXIvYXdz‹b200›"],
        ["IQoJb3JpZ2luX2Vj"]
    ),
    token!(
        "google-api-key",
        "Google API keys",
        ["AIza"],
        r"\bAIza[0-9A-Za-z_\-]{35}",
        ["AIza‹u35›"],
        ["AIzaSy"]
    ),
    token!(
        "google-oauth",
        "Google OAuth client secrets, access and refresh tokens",
        ["GOCSPX-", "ya29.", "1//0"],
        r"\bGOCSPX-[A-Za-z0-9_\-]{28}|\bya29\.[0-9A-Za-z_\-]{20,}|\b1//0[0-9A-Za-z_\-]{40,}",
        ["GOCSPX-‹u28›", "ya29.‹u120›", "1//0‹u100›"],
        ["ya29.", "GOCSPX-", "1//0", "see a/1//0/b.txt", "http://host:8080/1//0"]
    ),
    token!(
        "digitalocean-token",
        "DigitalOcean personal, OAuth and refresh tokens",
        ["dop_v1_", "doo_v1_", "dor_v1_"],
        r"\bdo[opr]_v1_[a-f0-9]{64}\b",
        ["dop_v1_‹h64›", "doo_v1_‹h64›"],
        ["dop_v1_"]
    ),
    token!(
        "digitalocean-spaces-key",
        "DigitalOcean Spaces access key ids",
        ["DO00"],
        r"\bDO00[A-Z0-9]{16}\b",
        ["DO00‹A16›"],
        ["DO00"]
    ),
    token!(
        "npm-token",
        "npm access tokens",
        ["npm_"],
        r"\bnpm_[A-Za-z0-9]{36}\b",
        ["npm_‹a36›"],
        ["echo $npm_config_cache", "npm_package_version=1.2.3"]
    ),
    token!(
        "pypi-token",
        "PyPI and TestPyPI upload tokens",
        ["pypi-AgE"],
        r"\bpypi-AgE[A-Za-z0-9_\-]{50,}",
        ["pypi-AgEIcHlwaS5vcmc‹u70›", "pypi-AgENdGVzdC5weXBpLm9yZw‹u70›"],
        ["pypi-AgEIcHlwaS5vcmc"]
    ),
    token!(
        "github-add-mask",
        "a value a GitHub Actions step masks (::add-mask::X): a secret by the step's own word",
        ["add-mask"],
        r#"::add-mask::(?P<s>[^\s"'`$%][^\s"'`]{5,})"#,
        ["echo \"::add-mask::⟦‹a40›⟧\"", "::add-mask::⟦‹u32›⟧"],
        ["echo \"::add-mask::$TOKEN\"", "echo '::add-mask::${{ steps.t.outputs.token }}'"]
    ),
    token!(
        "net-use-password",
        "the password of Windows' net use, the word after /user:NAME",
        ["/user"],
        r#"(?i)\bnet[ \t]+use\b[^\r\n]*?[ \t]/user:[^\s]+[ \t]+(?P<s>[^\s/"'*%$][^\s"']{3,})"#,
        ["net use Z: \\\\fs01\\fin /user:CORP\\jdoe ⟦‹a20›⟧ /persistent:no"],
        [
            "net use Z: \\\\fs01\\fin /user:CORP\\jdoe * /persistent:no",
            "net use Z: \\\\fs01\\fin /user:jdoe /persistent:no"
        ]
    ),
    token!(
        "crates-io-token",
        "crates.io API tokens (cargo login, cargo publish --token)",
        ["cio"],
        r"\bcio[A-Za-z0-9]{32}\b",
        ["cargo login ⟦cio‹a32›⟧"],
        ["cargo login", "ciocia", "the cio of acme"]
    ),
    token!(
        "password-verifier",
        "PostgreSQL's stored password forms: SCRAM-SHA-256 verifiers and md5 hashes",
        ["SCRAM-SHA-", "md5"],
        r"\bSCRAM-SHA-(?:1|256)\$[0-9]{1,7}:[A-Za-z0-9+/=]{8,}\$[A-Za-z0-9+/=]{16,}:[A-Za-z0-9+/=]{16,}|\bmd5[0-9a-f]{32}\b",
        ["\"admin\" \"⟦SCRAM-SHA-256$4096:‹b22›==$‹b43›=:‹b43›=⟧\"", "\"app\" \"⟦md5‹h32›⟧\""],
        ["password_encryption = scram-sha-256", "md5sum file.txt", "SCRAM-SHA-256 is the default"]
    ),
    token!(
        "huggingface-token",
        "Hugging Face user and organisation tokens",
        ["hf_", "api_org_"],
        r"\bhf_[A-Za-z]{34,40}\b|\bapi_org_[A-Za-z]{34}\b",
        ["hf_‹L34›", "api_org_‹L34›"],
        ["from huggingface_hub import hf_hub_download", "HF_HOME=/data/hf"]
    ),
    token!(
        "sendgrid-key",
        "SendGrid API keys",
        ["SG."],
        r"\bSG\.[A-Za-z0-9_\-]{22}\.[A-Za-z0-9_\-]{43}",
        ["SG.‹u22›.‹u43›"],
        ["SG.gov", "SG."]
    ),
    token!(
        "twilio-key",
        "Twilio API key and account SIDs",
        [
            "SK0", "SK1", "SK2", "SK3", "SK4", "SK5", "SK6", "SK7", "SK8", "SK9", "SKa", "SKb", "SKc", "SKd",
            "SKe", "SKf", "AC0", "AC1", "AC2", "AC3", "AC4", "AC5", "AC6", "AC7", "AC8", "AC9", "ACa", "ACb",
            "ACc", "ACd", "ACe", "ACf"
        ],
        r"\b(?:SK|AC)[0-9a-f]{32}\b",
        ["SK‹h32›", "AC‹h32›"],
        ["AC1 adapter", "SKU1234"]
    ),
    token!(
        "dockerhub-token",
        "Docker Hub personal and organisation access tokens",
        ["dckr_"],
        r"\bdckr_(?:pat|oat)_[A-Za-z0-9_\-]{27,}",
        ["dckr_pat_‹u27›"],
        ["dckr_pat_"]
    ),
    token!(
        "vault-token",
        "HashiCorp Vault service, batch and recovery tokens",
        ["hvs.", "hvb.", "hvr."],
        r"\bhv[sbr]\.[A-Za-z0-9_\-]{24,}",
        ["hvs.‹u24›", "hvb.‹u90›"],
        ["hvs."]
    ),
    token!(
        "terraform-cloud-token",
        "Terraform Cloud / Enterprise API tokens",
        [".atlasv1."],
        r"\b[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=\-]{60,70}",
        ["‹a14›.atlasv1.‹u67›"],
        ["x.atlasv1.y"]
    ),
    token!(
        "databricks-token",
        "Databricks personal access tokens",
        ["dapi"],
        r"\bdapi[a-f0-9]{32}(?:-\d)?\b",
        ["dapi‹h32›", "dapi‹h32›-2"],
        ["dapi", "rapid dapi calls"]
    ),
    token!(
        "shopify-token",
        "Shopify access, custom-app, partner and shared-secret tokens",
        ["shpat_", "shpca_", "shppa_", "shpss_"],
        r"\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}\b",
        ["shpat_‹h32›", "shpss_‹h32›"],
        ["shpat_"]
    ),
    token!(
        "heroku-key",
        "Heroku platform API keys (new format)",
        ["HRKU-"],
        r"\bHRKU-AA[0-9A-Za-z_\-]{30,}",
        ["HRKU-AA‹u58›"],
        ["HRKU-"]
    ),
    token!(
        "linear-key",
        "Linear API keys and OAuth tokens",
        ["lin_api_", "lin_oauth_"],
        r"\blin_(?:api|oauth)_[A-Za-z0-9]{40}\b",
        ["lin_api_‹a40›"],
        ["lin_api_"]
    ),
    token!(
        "notion-token",
        "Notion integration tokens (current and legacy)",
        ["ntn_", "secret_"],
        r"\bntn_[A-Za-z0-9]{40,50}\b|\bsecret_[A-Za-z0-9]{43}\b",
        ["ntn_‹d11›‹a35›", "secret_‹a43›"],
        ["ntn_", "secret_santa_list.txt"]
    ),
    token!(
        "sentry-token",
        "Sentry user and organisation auth tokens",
        ["sntrys_", "sntryu_"],
        r"\bsntry[su]_[A-Za-z0-9+/=_\-]{40,}",
        ["sntryu_‹h64›", "sntrys_‹u120›"],
        ["sntrys_"]
    ),
    token!(
        "grafana-token",
        "Grafana service-account and Grafana Cloud tokens",
        ["glsa_", "glc_"],
        r"\bglsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}\b|\bglc_[A-Za-z0-9+/]{32,}={0,2}",
        ["glsa_‹a32›_‹h8›", "glc_‹b60›"],
        ["glsa_", "glc_"]
    ),
    token!(
        "age-secret-key",
        "age identities (secret keys)",
        ["AGE-SECRET-KEY-1"],
        r"\bAGE-SECRET-KEY-1[02-9AC-HJ-NP-Z]{58}\b",
        ["AGE-SECRET-KEY-1‹Z58›"],
        ["age -r age1‹z58› -o x.age x", "AGE-SECRET-KEY-1"]
    ),
    token!(
        "tailscale-key",
        "Tailscale auth, API and OAuth client keys",
        ["tskey-"],
        r"\btskey-(?:auth|api|client|scim|webhook)-[A-Za-z0-9]{6,}-[A-Za-z0-9]{16,}",
        ["tskey-auth-k‹a10›CNTRL-‹a32›", "tskey-api-k‹a10›CNTRL-‹a32›"],
        ["tskey-auth-"]
    ),
    token!(
        "supabase-token",
        "Supabase personal access tokens and secret keys",
        ["sbp_", "sb_secret_"],
        r"\bsbp_(?:oauth_)?[a-f0-9]{40}\b|\bsb_secret_[A-Za-z0-9_\-]{20,}",
        ["sbp_‹h40›", "sb_secret_‹u31›"],
        ["sbp_", "sb_publishable_‹u31›"]
    ),
    token!(
        "postman-key",
        "Postman API keys",
        ["PMAK-"],
        r"\bPMAK-[a-f0-9]{24}-[a-f0-9]{34}\b",
        ["PMAK-‹h24›-‹h34›"],
        ["PMAK-"]
    ),
    token!(
        "atlassian-token",
        "Atlassian API tokens",
        ["ATATT3", "ATCTT3"],
        r"\bAT[AC]TT3[A-Za-z0-9_\-=]{50,}",
        ["ATATT3x‹u180›"],
        ["ATATT3"]
    ),
    token!("groq-key", "Groq API keys", ["gsk_"], r"\bgsk_[A-Za-z0-9]{48,52}\b", ["gsk_‹a52›"], ["gsk_"]),
    token!(
        "perplexity-key",
        "Perplexity API keys",
        ["pplx-"],
        r"\bpplx-[A-Za-z0-9]{40,56}\b",
        ["pplx-‹a48›"],
        ["pplx-"]
    ),
    token!(
        "replicate-token",
        "Replicate API tokens",
        ["r8_"],
        r"\br8_[A-Za-z0-9]{36,40}\b",
        ["r8_‹a37›"],
        ["r8_"]
    ),
    token!(
        "pulumi-token",
        "Pulumi access tokens",
        ["pul-"],
        r"\bpul-[a-f0-9]{40}\b",
        ["pul-‹h40›"],
        ["pul-"]
    ),
    token!(
        "doppler-token",
        "Doppler personal, service and service-account tokens",
        ["dp.pt.", "dp.st.", "dp.sa.", "dp.ct.", "dp.scim.", "dp.audit."],
        r"\bdp\.(?:pt|st|sa|ct|scim|audit)\.(?:[a-z0-9_\-]+\.)?[A-Za-z0-9]{40,44}\b",
        ["dp.pt.‹a43›", "dp.st.prd.‹a40›"],
        ["dp.pt."]
    ),
    token!(
        "planetscale-token",
        "PlanetScale passwords and tokens",
        ["pscale_pw_", "pscale_tkn_", "pscale_oauth_"],
        r"\bpscale_(?:pw|tkn|oauth)_[A-Za-z0-9_\-.=]{30,}",
        ["pscale_pw_‹u43›"],
        ["pscale_pw_"]
    ),
    token!(
        "rubygems-key",
        "RubyGems API keys",
        ["rubygems_"],
        r"\brubygems_[a-f0-9]{48}\b",
        ["rubygems_‹h48›"],
        ["rubygems_"]
    ),
    token!(
        "artifactory-key",
        "JFrog Artifactory API keys",
        ["AKCp"],
        r"\bAKCp[A-Za-z0-9]{69}\b",
        ["AKCp‹a69›"],
        ["AKCp"]
    ),
    token!(
        "facebook-token",
        "Meta / Facebook access tokens",
        ["EAA"],
        r"\bEAA[A-Za-z0-9]{100,}",
        ["EAAB‹a150›"],
        ["EAAB", "EAAC rule"]
    ),
    token!(
        "telegram-bot-token",
        "Telegram bot tokens",
        [":AA"],
        r"(?:\b|bot)(?P<s>\d{8,10}:AA[A-Za-z0-9_\-]{30,34})",
        ["‹d10›:AA‹u33›", "curl https://api.telegram.org/bot⟦‹d9›:AA‹u33›⟧/getMe"],
        ["12:AA"]
    ),
    token!(
        "newrelic-key",
        "New Relic user API keys",
        ["NRAK-"],
        r"\bNRAK-[A-Z0-9]{27}\b",
        ["NRAK-‹A27›"],
        ["NRAK-"]
    ),
    token!(
        "mailgun-key",
        "Mailgun API keys",
        ["key-"],
        r"\bkey-[a-f0-9]{32}\b",
        ["key-‹h32›"],
        ["ssh-keygen -t ed25519", "primary-key-index"]
    ),
    token!("render-key", "Render API keys", ["rnd_"], r"\brnd_[A-Za-z0-9]{32}\b", ["rnd_‹a32›"], ["rnd_"]),
    token!(
        "jwt",
        "JSON Web Tokens (header.payload.signature)",
        ["eyJ"],
        r"\beyJ[A-Za-z0-9_\-]{10,}\.eyJ[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]*",
        ["eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJ‹u60›.‹u43›"],
        ["eyJhbGciOiJIUzI1NiJ9", "eyJ"]
    ),
    Rule {
        id: "private-key",
        what: "PEM, OpenPGP and PuTTY private keys, and any armored block but a public one: the body is replaced, the BEGIN/END lines kept",
        keywords: &["-----BEGIN ", "Private-Lines:"],
        matcher: Matcher::Context(Engine::Pem),
        gate: Gate::Any,
        positives: &[
            r"-----BEGIN RSA PRIVATE KEY-----\n⟦MII‹b60›\n‹b64›\n‹b20›==⟧\n-----END RSA PRIVATE KEY-----",
            "Public-Lines: 1\nAAAAC3‹b58›\nPrivate-Lines: 1\n⟦AAAAIL‹b42›⟧\nPrivate-MAC: ‹h64›",
            r#"{"key": "-----BEGIN PRIVATE KEY-----\n⟦MIIE‹b60›\n‹b30›⟧\n-----END PRIVATE KEY-----\n"}"#,
            "-----BEGIN OPENSSH PRIVATE KEY----- ⟦b3BlbnNzaC1rZXktdjEAAAAA‹b60›⟧ -----END OPENSSH PRIVATE KEY-----",
            r"-----BEGIN ARGO TUNNEL TOKEN-----\n⟦eyJ‹b60›\n‹b40›⟧\n-----END ARGO TUNNEL TOKEN-----",
        ],
        negatives: &[
            "grep -rl -- '-----BEGIN RSA PRIVATE KEY-----' .",
            "-----BEGIN PUBLIC KEY-----",
            r"-----BEGIN CERTIFICATE-----\nMIIB‹b60›\n-----END CERTIFICATE-----",
            r"-----BEGIN PGP MESSAGE-----\nhQEM‹b60›\n-----END PGP MESSAGE-----",
            "openssl genpkey -algorithm ed25519 -out private key.pem",
        ],
    },
    Rule {
        id: "assign",
        what: "NAME=value where NAME names a secret: export, inline prefix, set -gx, setenv, docker -e, --from-literal, -var",
        keywords: NAME_WORDS,
        matcher: Matcher::Context(Engine::Equals),
        gate: Gate::Named,
        positives: &[
            "export DB_PASSWORD=⟦hunter2⟧",
            "PGPASSWORD='⟦falcon nebula 9⟧' psql -h db -U app",
            "set -gx OPENAI_API_KEY ⟦‹a48›⟧",
            "setenv AWS_SECRET_ACCESS_KEY ⟦‹b40›⟧",
            "docker run -e API_TOKEN=⟦‹a32›⟧ app:latest",
            "kubectl create secret generic db --from-literal=password=⟦S3cure!pw⟧",
            "terraform apply -var 'db_password=⟦Tr0ub4dor&3⟧'",
            "              (sql-password \"⟦Mango^Piston‹d4›⟧\")",
            "export TWILIO_AUTH_TOKEN=\"⟦‹h32›⟧\"",
            "HEROKU_API_KEY=⟦‹h8›-‹h4›-‹h4›-‹h4›-‹h12›⟧ heroku apps",
            "Server=db;Database=app;User Id=sa;Password=⟦P@ssw0rd!⟧;",
            "//registry.npmjs.org/:_authToken=⟦‹h8›-‹h4›-‹h4›-‹h4›-‹h12›⟧",
            "[Environment]::SetEnvironmentVariable(\"API_TOKEN\", \"⟦‹a24›⟧\", \"User\")",
            "os.environ['OPENAI_API_KEY'] = '⟦‹a40›⟧'",
            "$env:GITHUB_TOKEN = \"⟦‹a40›⟧\"",
            // Lines inside one string: `\n` starts the next.
            "printf 'host=github.com\\nusername=me\\npassword=⟦Zq8rT5wLp⟧\\n' | git credential approve",
            "git credential approve <<< $'protocol=https\\npassword=⟦Zq8!rT5wLp⟧\\n'",
        ],
        negatives: &[
            "TOKENIZERS_PARALLELISM=false python train.py",
            "export SSH_AUTH_SOCK=/run/user/1000/ssh-agent.sock",
            "export SECRET_NAME=prod/db/password",
            "export GITHUB_TOKEN=$(gh auth token)",
            "export API_KEY=${API_KEY:-}",
            "export PASSWORD_STORE_DIR=~/.password-store",
            "KMS_KEY_ID=alias/app-key aws kms encrypt",
            "export OPENAI_API_KEY=<your-key>",
            "export DESKTOP_SESSION=plasma",
            "ssh -o PasswordAuthentication=no host",
            "export GPG_TTY=$(tty)",
            "export TF_VAR_db_password=\"$DB_PASSWORD\"",
            // Source code and tool output in scrollback.
            "      + password                = (sensitive value)",
            "    password_hash = bcrypt.hashpw(password.encode(), bcrypt.gensalt())",
            "    let secret = std::env::var(\"API_SECRET\")?;",
            "    const apiKey = process.env.API_KEY;",
        ],
    },
    Rule {
        id: "flag",
        what: "--password, --token, --api-key, -storepass … followed by a value",
        keywords: NAME_WORDS,
        matcher: Matcher::Context(Engine::Shell),
        gate: Gate::Named,
        positives: &[
            "docker login --username bob --password ⟦Pa55word!⟧ registry.example.com",
            "mysql --password=⟦hunter2⟧ -u root",
            "keytool -importkeystore -srcstorepass ⟦changeit2⟧ -deststorepass ⟦hunter22⟧",
            "heroku login --api-key ⟦‹h32›⟧",
            "gh secret set DEPLOY_KEY --body ⟦‹a40›⟧",
            "aws ssm put-parameter --name MyParam --type SecureString --value ⟦‹a24›⟧",
            "az ad sp create-for-rbac --client-secret ⟦‹u34›⟧",
            "openssl enc -aes256 -pass pass:⟦t0ps3cret⟧ -in a -out b",
            "openssl rsa -in enc.key -passin pass:⟦t0ps3cret⟧ -out dec.key",
            // Corpus miss: a random token may start with a dash.
            "vendor-cli login --token ⟦-7Rh‹a37›⟧",
            // Windows' spelling of a flag.
            "cmdkey /add:sql01 /user:CORP\\svc /pass:⟦‹a22›⟧",
            "tool.exe /password:⟦Ab3‹a12›⟧",
        ],
        negatives: &[
            "aws secretsmanager get-secret-value --secret-id prod/db/password",
            "cmdkey /add:sql01 /user:svc /pass",
            "cmdkey /pass:%PASSWORD%",
            "net user bob /passwordreq:yes",
            "ansible-playbook site.yml --ask-pass",
            "docker login --password-stdin ghcr.io",
            "cargo login --token-file ~/.cargo/token",
            "gh auth token",
            "pass show email/gmail",
            "vault kv get -field=password secret/db",
            "gcloud auth print-access-token",
            "mongod --auth --dbpath /data/db",
            // mysql --help.
            "  -p, --password[=name] Password to use when connecting to server.",
            // Found by fuzzing: an option name holds only letters, digits, `-`, `_`, `.`.
            "-pAPI_KEY-u[REDACTED]Authorization:[REDACTED] TOKEN-passTOKEN@mysql%",
        ],
    },
    Rule {
        id: "short-flag",
        what: "per-command short password flags: mysql -pX, 7z -pX, sshpass -p, redis-cli -a, ldapsearch -w, zip -P, ipmitool -P, snmpwalk -c …",
        keywords: &[
            "mysql",
            "mariadb",
            "7z ",
            "7za",
            "7zz",
            "7zr",
            "rar",
            "sqlcmd",
            "bcp",
            "osql",
            "isql",
            "mosquitto",
            "zip",
            "ldap",
            "redis-cli",
            "valkey-cli",
            "openssl",
            "ssh-keygen",
            "sshpass",
            "ipmitool",
            "snmp",
            "mongo",
            "doctl",
            "codecov",
            "cml",
            "login",
            // `aws ssm put-parameter --value X`: the value is the secret whatever the
            // parameter's name, which holds no keyword (`--name MyParam`).
            "put-parameter",
        ],
        matcher: Matcher::Context(Engine::Shell),
        gate: Gate::Options(&[]),
        positives: &[
            "mysql -u root -p⟦hunter2⟧ app",
            // A command line inside a string literal of code.
            "os.system(\"mysql -u root -p⟦hunter2⟧ app\")",
            "mysqldump -uroot -p⟦S3cr3t⟧ shop > shop.sql",
            "7z a -p⟦Vault42x⟧ backup.7z docs/",
            "sshpass -p ⟦Summer2024!⟧ ssh deploy@10.0.0.5",
            "redis-cli -h cache -p 6380 -a ⟦r3disPass⟧ ping",
            "zip -P ⟦zipPw99⟧ out.zip a.txt",
            "ldapsearch -x -D cn=admin,dc=ex,dc=org -w ⟦ldapPw1⟧ -b dc=ex,dc=org",
            "ssh-keygen -t ed25519 -N ⟦keyPassphrase1⟧ -f id",
            "sqlcmd -S db -U sa -P ⟦Sql$erver1⟧",
            "docker login -u bob -p ⟦Pa55word!⟧ registry.example.com",
            "mongosh -u admin -p ⟦m0ngoPw⟧ --authenticationDatabase admin",
        ],
        negatives: &[
            "ssh -p 22 host",
            "psql -h db -p 5432 -U app",
            "git add -p",
            "mkdir -p src/bin",
            "docker run -p 8080:80 nginx",
            "redis-cli -p 6379 ping",
            "mysql -u root -p app",
            "cp -p a b",
            "unzip -p a.zip f",
            "patch -p1 < fix.diff",
            "openssl enc -d -aes256 -pass env:ARCHIVE_PW -in f",
            "ssh-keygen -t ed25519 -N '' -f id",
            // openssl options are single-dash words: `-key` is not `-k ey`.
            "openssl req -new -key k.pem -out r.csr",
        ],
    },
    Rule {
        id: "userpass",
        what: "user:password arguments: curl -u, --dest-creds, smbclient -U u%p, lftp -u u,p, xfreerdp /p:, htpasswd -b …",
        keywords: &[
            "curl",
            "creds",
            "smbclient",
            "rpcclient",
            "smbmap",
            "smbcacls",
            "lftp",
            "freerdp",
            "htpasswd",
            "rabbitmqctl",
            "mysqladmin",
            "--user",
            // httpie and xh: `http -a user:pass …`.
            " -a ",
            "net ",
        ],
        matcher: Matcher::Context(Engine::Shell),
        gate: Gate::Options(&["freerdp", "rabbitmqctl", "mysqladmin"]),
        positives: &[
            "curl -u admin:⟦s3cretPw⟧ https://api.example.com",
            "curl --user deploy:⟦hunter2⟧ https://x.example.com",
            "skopeo copy --dest-creds bot:⟦Tok3nPass⟧ docker://a docker://b",
            "smbclient //fs/share -U alice%⟦W1nterPw⟧",
            "lftp -u ftpuser,⟦ftpPa55⟧ ftp.example.com",
            "xfreerdp /u:admin /p:⟦Rdp!Pass1⟧ /v:10.0.0.9",
            "htpasswd -bc .htpasswd admin ⟦adminPw1⟧",
            "rabbitmqctl add_user app ⟦rabbitPw9⟧",
            "mysqladmin -u root password ⟦newRootPw⟧",
            "http -a alice:⟦h1ddenPw⟧ GET https://api.example.com/me",
            "http --auth alice:⟦h1ddenPw⟧ GET https://api.example.com/me",
        ],
        negatives: &[
            "curl -u admin https://x.example.com",
            "curl -u $USER:$PASS https://x.example.com",
            "git log -u",
            "xfreerdp /u:admin /v:host",
            "htpasswd -c .htpasswd admin",
        ],
    },
    Rule {
        id: "stdin",
        what: "secrets piped or here-stringed into sudo -S, --password-stdin, chpasswd, kinit, cryptsetup, --with-token, base64",
        keywords: &[
            "sudo",
            "stdin",
            "chpasswd",
            "kinit",
            "cryptsetup",
            "with-token",
            "passphrase-fd",
            "pubkey",
            "base64",
            "secret",
            "passwd",
            "ssh-add",
            "devops",
        ],
        matcher: Matcher::Context(Engine::Shell),
        gate: Gate::LineHas(b"|<"),
        positives: &[
            "echo '⟦hunter2⟧' | sudo -S apt update",
            "echo ⟦Pa55word!⟧ | docker login -u bob --password-stdin",
            "echo 'alice:⟦N3wPass!⟧' | sudo chpasswd",
            "printf '%s\\n' ⟦krbPass1⟧ | kinit alice@EXAMPLE.COM",
            "gh auth login --with-token <<< ⟦‹a40›⟧",
            "echo -n ⟦luksPass1⟧ | cryptsetup open /dev/sdb1 data -",
            "echo ⟦‹b43›=⟧ | wg pubkey",
            "echo -n admin:⟦hunter2⟧ | base64",
            "echo -n '⟦Zq8!rT5wLp⟧' | base64",
            "base64 <<< ⟦s3cretVal⟧",
            "echo ⟦‹a52›⟧ | az devops login --organization https://dev.azure.com/acme",
        ],
        negatives: &[
            "echo $PASSWORD | sudo -S true",
            "cat ~/pw.txt | docker login --password-stdin",
            "echo hello | sudo tee /etc/x",
            "sudo -S true < /dev/null",
            "echo -n \"$PASSWORD\" | base64",
            "echo 'two words' | base64",
            "wg genkey | tee privatekey | wg pubkey > publickey",
        ],
    },
    Rule {
        id: "positional",
        what: "secrets as positional arguments: vault login, ngrok authtoken, snyk auth, wpa_passphrase, nmcli password, aws configure set",
        keywords: &[
            "vault",
            "ngrok",
            "snyk",
            "wpa_passphrase",
            "nmcli",
            "configure",
            "dotenv",
            // `dotenvx set`: the keyword must be a whole word.
            "dotenvx",
            "config",
            "setenv",
            "cloudflared",
            "heroku",
            // `openssl passwd PASSWORD`, which has no option to wake the short flags.
            "openssl",
            // A kickstart file's `rootpw [--plaintext] PASSWORD`.
            "rootpw",
        ],
        matcher: Matcher::Context(Engine::Shell),
        gate: Gate::Word,
        positives: &[
            "vault login ⟦s.‹a24›⟧",
            "ngrok config add-authtoken ⟦‹a27›_‹a21›⟧",
            "snyk auth ⟦‹h8›-‹h4›-‹h4›-‹h4›-‹h12›⟧",
            "wpa_passphrase HomeWifi ⟦wifiPass123⟧",
            "nmcli dev wifi connect Cafe password ⟦latte2024⟧",
            "aws configure set aws_secret_access_key ⟦‹b40›⟧",
            "poetry config http-basic.internal ci ⟦p0etryPw⟧",
            "npm config set //registry.npmjs.org/:_authToken ⟦‹h8›-‹h4›-‹h4›-‹h4›-‹h12›⟧",
            "rclone config create s3 s3 access_key_id AKIAX secret_access_key ⟦‹b40›⟧",
            "rootpw --plaintext ⟦Kx9mQ2vLp7⟧",
        ],
        negatives: &[
            "vault login -method=oidc",
            "vault login",
            "nmcli connection show",
            "aws configure set region eu-west-1",
            "ngrok http 8080",
            "snyk auth",
            "git config --global user.signingkey ~/.ssh/id_ed25519.pub",
        ],
    },
    Rule {
        id: "command-output",
        what: "a secret a command prints alone on a line, when the command's own words name one (`cat ~/.vault_pass`, `aws ecr get-login-password`, `heroku auth:token`, `op item get … --fields password`, `pass show x`): each line up to the next prompt that is one token shaped as a secret",
        keywords: &["pass", "pwd", "psk", "token", "secret", "key", "auth", "cred", "private"],
        matcher: Matcher::Context(Engine::Shell),
        // The command line only opens its output's lines below it, which hold no keyword.
        gate: Gate::Prompted,
        positives: &[
            "dev@box:~/proj$ cat .vault_pass\n⟦Ember!Orbit7537⟧\ndev@box:~/proj$ ",
            "$ aws ecr get-login-password --region eu-west-1\n⟦eyJwYXlsb2FkIjoiSm9obiBEb2UifQ.dGVzdDEyMw⟧\n$ ",
            "dev@box:~$ heroku auth:token\n ›   Warning: token will expire 04/18/2026\n⟦HRKU-AA8i8ltf3AZLWc8Ce8E5qbmt3n8Lom7W3gzvp⟧\ndev@box:~$ ",
            "u@h:~$ op item get \"Orders DB\" --fields label=password --reveal\n⟦comet-maple-nimbus-cactus31⟧",
            "u@h:~$ pass show prod/db\n⟦Lotus@Comet4236⟧\nu@h:~$ ",
        ],
        negatives: &[
            "dev@box:~$ cat package.json | jq -r .version\n1.4.2",
            "dev@box:~$ ls ~/.password-store\nGithub2Work.gpg",
            "dev@box:~$ cat tokenizer.py\nTokenizer2Base",
            "dev@box:~$ cat .vault_pass > /tmp/copy\nEmber!Orbit7537",
            "dev@box:~$ git log -1 --format=%H -- secrets.yaml\n5d41402abc4b2a76b9719d911017c592aabbccdd",
            "dev@box:~$ docker ps -q --filter name=auth\n3f4e1a2b9c7d",
            "dev@box:~$ which pass\n/usr/bin/pass",
        ],
    },
    Rule {
        id: "key-file",
        what: "text echoed or printed into a private-key or credential file (id_*, *.pem, *.key, .netrc, *token*), by a redirection or through tee",
        keywords: &[
            "id_rsa",
            "id_ed25519",
            "id_ecdsa",
            "id_dsa",
            ".pem",
            ".key",
            ".p12",
            ".pfx",
            ".ppk",
            ".netrc",
            ".pgpass",
            "credentials",
            "master.key",
            "token",
            "secret",
            "password",
            "apikey",
            "api_key",
        ],
        matcher: Matcher::Context(Engine::Shell),
        // A redirection, or a pipe into `tee`.
        gate: Gate::LineHas(b"<>|"),
        positives: &[
            "echo \"⟦‹b70›⟧\" >> ~/.ssh/id_ed25519",
            "printf '%s' ⟦‹a40›⟧ > ~/.config/hub/token",
            "echo ⟦‹h32›⟧ > config/master.key",
            "echo ⟦‹a26›⟧ | sudo tee -a /etc/app/credentials",
        ],
        negatives: &[
            "echo '-----BEGIN OPENSSH PRIVATE KEY-----' > ~/.ssh/id_ed25519",
            "echo hello > notes.txt",
            "cat ~/.ssh/id_ed25519.pub >> ~/.ssh/authorized_keys",
            "echo hello | tee notes.txt",
            "cat ~/.netrc | tee backup.txt",
        ],
    },
    Rule {
        id: "key-file-shown",
        what: "a file that gives credentials by position (.pgpass, PgBouncer's userlist.txt, Postfix's sasl_passwd, rsyncd.secrets, pppd's chap-secrets and pap-secrets) shown by cat, head, tail, grep or an agent's Read: each entry's secret field (the spans count as key-file)",
        keywords: &[
            ".pgpass",
            "pgbouncer/userlist.txt",
            "sasl_passwd",
            "rsyncd.secrets",
            "chap-secrets",
            "pap-secrets",
        ],
        matcher: Matcher::Context(Engine::Shell),
        // The command line only opens the file's lines below it, which hold no keyword.
        gate: Gate::Any,
        positives: &[
            "cat ~/.pgpass\ndb.example.com:5432:app:alice:⟦Pg‹a10›⟧\n*:*:*:bob:⟦‹a12›⟧",
            "cat /etc/pgbouncer/userlist.txt\n\"app\" \"⟦Pg‹a10›⟧\"\n\"report\" \"⟦‹a12›⟧\"",
            "sudo cat /etc/postfix/sasl_passwd\n[smtp.example.com]:587 alerts@example.com:⟦‹a16›⟧",
            "cat /etc/ppp/chap-secrets\n# client server secret IP\nalice * ⟦Pg‹a10›⟧ *",
        ],
        negatives: &[
            "ls -l /etc/postfix/sasl_passwd",
            "cat /etc/pgbouncer/userlist.txt | sort",
            "cat notes/userlist.txt\n\"alice\" \"Kx8vQ2mZp4\"",
            "ls -l ~/.pgpass",
            "chmod 600 ~/.pgpass",
            "cat ~/.pgpass | wc -l",
            "grep -c . ~/.pgpass",
        ],
    },
    Rule {
        id: "base64-secret",
        what: "a base64 blob piped to base64 -d that decodes to a secret or to user:password",
        keywords: &["base64"],
        matcher: Matcher::Context(Engine::Shell),
        gate: Gate::LineHas(b"|<"),
        positives: &[
            // "password=Tr0ub4dor&3" and "deploy:N3wPass!".
            "echo ⟦cGFzc3dvcmQ9VHIwdWI0ZG9yJjM=⟧ | base64 -d",
            "base64 --decode <<< ⟦ZGVwbG95Ok4zd1Bhc3Mh⟧",
        ],
        negatives: &["echo aGVsbG8gd29ybGQ= | base64 -d", "base64 -d image.b64 > image.png"],
    },
    Rule {
        id: "url-password",
        what: "the password in scheme://user:password@host (git, databases, proxies, brokers)",
        keywords: &["://"],
        matcher: Matcher::Context(Engine::Url),
        gate: Gate::Userinfo,
        positives: &[
            "git clone https://deploy:⟦Pa55w0rd⟧@git.example.com/app.git",
            "psql postgres://app:⟦s3cr3t⟧@db:5432/app",
            "mongosh 'mongodb+srv://admin:⟦M0ng0Pass⟧@cluster0.abcde.mongodb.net/test'",
            "redis-cli -u redis://:⟦r3disPw⟧@cache:6379/0",
            "export HTTPS_PROXY=http://bob:⟦proxyPw1⟧@proxy:3128",
            "git remote add origin https://⟦‹h40›⟧@github.com/o/r.git",
        ],
        negatives: &[
            "git clone https://github.com/org/repo.git",
            "ssh git@github.com",
            "curl http://localhost:8080/health",
            "psql postgres://app@db:5432/app",
            "curl https://user:$PASS@host.example.com",
            "curl http://[::1]:8080/",
            "git clone ssh://git@gitlab.example.com:2222/team/app.git",
        ],
    },
    Rule {
        id: "header",
        what: "Authorization and Proxy-Authorization header credentials",
        keywords: &["uthorization", "UTHORIZATION"],
        matcher: Matcher::Context(Engine::Header),
        // A quote may close the name first: `{"Authorization": "Bearer …"}` in a log line.
        gate: Gate::Then(b":=\"'"),
        positives: &[
            "curl -H 'Authorization: Bearer ⟦‹u40›⟧' https://api.example.com",
            "2024-01-01 DEBUG headers={\"Authorization\": \"Bearer ⟦‹u40›⟧\"}",
            "headers: {'Authorization': 'Basic ⟦‹b28›⟧'}",
            "curl -H \"Authorization: Basic ⟦‹b28›⟧\" https://x.example.com",
            "http GET api.example.com Authorization:'token ⟦‹h40›⟧'",
        ],
        negatives: &[
            "curl -H 'Authorization: Bearer $TOKEN' https://x.example.com",
            "curl -H \"Authorization: Bearer ${{ secrets.API_TOKEN }}\"",
            "grep -rn Authorization: src/",
        ],
    },
    Rule {
        id: "kv",
        what: "name: value where the name names a secret (YAML, JSON bodies, X-Api-Key-style headers)",
        keywords: NAME_WORDS,
        matcher: Matcher::Context(Engine::Colon),
        gate: Gate::Named,
        positives: &[
            "curl -H 'X-Api-Key: ⟦‹a32›⟧' https://api.example.com",
            "curl -H 'PRIVATE-TOKEN: ⟦‹u20›⟧' https://gitlab.example.com/api/v4/user",
            "  password: ⟦hunter2⟧",
            "{\"client_secret\": \"⟦‹u40›⟧\"}",
            "curl -d '{\"password\":\"⟦Pa55!word⟧\"}' https://x.example.com/login",
        ],
        negatives: &[
            "  token_type: bearer",
            "expires_in: 3600",
            "Password: ",
            "key: app.kubernetes.io/name",
            "\"auth\": \"$AUTH\"",
            "public_key: ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI‹b43› me@host",
            // Corpus false positive: `::` is a path separator, not `name: value`.
            "test auth::token::tests::parses_bearer_header ... ok",
            "export function verifyToken(token: string): Claims {",
            // sops ciphertext.
            "password: ENC[AES256_GCM,data:‹b16›,iv:‹b16›,tag:‹b16›,type:str]",
        ],
    },
    Rule {
        id: "env-pair",
        what: "a secret's name and value as two keys of one entry: Kubernetes/ECS env, CloudFormation parameters",
        keywords: NAME_WORDS,
        matcher: Matcher::Context(Engine::Pair),
        gate: Gate::Named,
        positives: &[
            "env: [{name: DB_PASSWORD, value: ⟦Hx4‹a9›⟧}]",
            "{\"name\": \"DB_PASSWORD\", \"value\": \"⟦Hx4‹a9›⟧\"}",
            "aws cloudformation create-stack --stack-name app --parameters ParameterKey=DBPassword,ParameterValue=⟦Hx4‹a9›⟧",
            "{\"OptionName\": \"API_TOKEN\", \"Value\": \"⟦‹a32›⟧\"}",
            "env { name = \"DB_PASSWORD\" value = \"⟦Hx4‹a9›⟧\" }",
        ],
        negatives: &[
            "{name: DB_PASSWORD, valueFrom: {secretKeyRef: {name: db, key: password}}}",
            "- {name: DB_PASSWORD, value: $(DB_PASS)}",
            "{\"name\": \"DB_PASSWORD_FILE\", \"value\": \"/run/secrets/db\"}",
            "{\"name\": \"API_TOKEN\"}, {\"name\": \"PORT\", \"value\": \"8080\"}",
            "ParameterKey=DBPassword,UsePreviousValue=true",
        ],
    },
    Rule {
        id: "cookie",
        what: "cookie values in Cookie:/Set-Cookie: headers and curl -b",
        keywords: &["ookie", "OOKIE", "curl"],
        matcher: Matcher::Context(Engine::Cookie),
        gate: Gate::Then(b":"),
        positives: &[
            "curl -b 'session=⟦‹a32›⟧' https://x.example.com",
            "curl -H 'Cookie: sid=⟦‹a24›⟧; theme=dark' https://x.example.com",
        ],
        negatives: &["curl -b cookies.txt https://x.example.com", "curl -c jar.txt https://x.example.com"],
    },
    Rule {
        id: "query",
        what: "secret query parameters (api_key, access_token, sig, password …; appid when its value is a generated key), never tracking ones",
        keywords: QUERY_WORDS,
        matcher: Matcher::Context(Engine::Equals),
        gate: Gate::Named,
        positives: &[
            "curl 'https://api.example.com/v1/x?api_key=⟦‹a32›⟧&page=2'",
            "azcopy copy 'https://acct.blob.core.windows.net/c/f?sv=2022-11-02&sr=b&sig=⟦‹b43›%3D⟧' .",
            "wget 'https://dl.example.com/file?token=⟦‹u32›⟧'",
            "jdbc:postgresql://db:5432/app?user=app&password=⟦Pgpass1⟧",
            "https://api.openweathermap.org/data/2.5/weather?q=Berlin&appid=⟦‹h32›⟧&units=metric",
        ],
        negatives: &[
            "open 'https://shop.example.com/?utm_source=news&gclid=Cj0KCQjw‹u40›'",
            "open 'https://example.com/?fbclid=IwAR‹u40›'",
            "curl 'https://api.example.com/items?page_token=CAE'",
            "https://www.google.com/search?q=rust+borrow+checker&ei=‹u22›",
            // An application's id that is an id: a number, a UUID, a name.
            "https://graph.facebook.com/oauth?appid=‹d15›&redirect=x",
            "https://login.example.com/?appid=‹h8›-‹h4›-‹h4›-‹h4›-‹h12›",
            "https://api.example.com/?app_id=weather-widget&key=abc",
        ],
    },
    Rule {
        id: "aws-secret",
        what: "AWS secret access keys as `aws configure` prompts for them",
        keywords: &["Secret Access Key"],
        matcher: Matcher::Context(Engine::AwsPrompt),
        gate: Gate::Any,
        positives: &["AWS Secret Access Key [None]: ⟦‹b40›⟧"],
        negatives: &["AWS Secret Access Key [None]: ", "AWS Secret Access Key [****************abcd]: "],
    },
    Rule {
        id: "generated-literal",
        what: "a literal a generator made (long, mixed case and digits, no words), standing alone as a call's argument or a list's element, whatever its name",
        // Two literals in a row: a lone argument (`Auth("…")`) is not read yet, since a
        // keyword is three bytes at least and `("` is in most code.
        keywords: &[", \"", ", '"],
        matcher: Matcher::Context(Engine::Generated),
        gate: Gate::Any,
        positives: &[
            "const client = new Client(\"acme-prod\", \"⟦Zu5‹a29›⟧\", { retries: 3 });",
            "session.auth = HTTPBasicAuth('deploy', '⟦Q7x‹a33›⟧')",
        ],
        negatives: &[
            "assert_eq!(digest, \"9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08\")",
            "f(\"3fa85f64-5717-4562-b3fc-2c963f66afa6\")",
            "require(\"@babel/helper-plugin-utils\")",
            "throw new Error(\"ConnectionRefusedErrorHandler2\")",
        ],
    },
    Rule {
        id: "credential-argument",
        what: "a password given by position to a call that takes a user and a password (`HTTPBasicAuth(user, …)`, `auth=(user, …)`, `NetworkCredential`, `.login(user, …)`), or to PowerShell's `ConvertTo-SecureString … -AsPlainText`",
        keywords: &[
            "BasicAuth",
            "DigestAuth",
            "ProxyAuth",
            "NetworkCredential",
            "UsernamePasswordCredentials",
            "PasswordAuthentication",
            ".login",
            "auth=",
            "auth =",
            "ConvertTo-SecureString",
        ],
        matcher: Matcher::Context(Engine::Generated),
        gate: Gate::Any,
        positives: &[
            "r = requests.get(url, auth=(\"admin\", \"⟦Mosaic!Raven‹d4›⟧\"))",
            "session.auth = HTTPBasicAuth('deploy', '⟦Hx4‹a9›⟧')",
            "var cred = new NetworkCredential(\"svc\", \"⟦Hx4‹a9›⟧\", \"CORP\");",
            "server.login(\"alerts@example.com\", \"⟦‹a16›⟧\")",
            "$pw = ConvertTo-SecureString \"⟦Velvet-Comet‹d4›⟧\" -AsPlainText -Force",
            "$pw = ConvertTo-SecureString -String '⟦Hx4‹a9›⟧' -AsPlainText -Force",
        ],
        negatives: &[
            "r = requests.get(url, auth=(user, password))",
            "session.auth = HTTPBasicAuth(os.environ['USER'], os.environ['PASSWORD'])",
            "server.login(user, \"\")",
            "$pw = ConvertTo-SecureString $plain -AsPlainText -Force",
            "$pw = Read-Host -AsSecureString | ConvertTo-SecureString",
            "auth = (\"admin\", \"changeme\")",
        ],
    },
    Rule {
        id: "bearer-credential",
        what: "a generated credential after the word Bearer, wherever it stands (`token = \"Bearer …\"`, `\"Bearer \" + \"…\"`, a log line)",
        keywords: &["Bearer", "bearer"],
        matcher: Matcher::Context(Engine::Generated),
        gate: Gate::Any,
        positives: &["token = \"Bearer ⟦He9‹a37›⟧\"", "req.headers.auth = \"Bearer \" + \"⟦Qx7‹a29›⟧\";"],
        negatives: &["Bearer tokens are sent in the Authorization header", "auth: Bearer $TOKEN"],
    },
    Rule {
        id: "aws-secret-beside-id",
        what: "an AWS secret access key beside its access key id on one line (a CSV download, a pasted pair), with no name",
        keywords: &["AKIA", "ASIA"],
        matcher: Matcher::Context(Engine::Partner),
        gate: Gate::WordStart,
        positives: &["AKIA‹B16›,⟦‹b40›⟧", "ci-deploy,AKIA‹B16›,⟦‹b40›⟧,Active", "AKIA‹B16› ⟦‹b40›⟧"],
        negatives: &[
            "AKIAIOSFODNN7EXAMPLE,0123456789abcdef0123456789abcdef01234567",
            "see AKIA keys in the console",
        ],
    },
    Rule {
        id: "netrc",
        what: ".netrc entries: machine … login … password X",
        keywords: &["machine"],
        matcher: Matcher::Context(Engine::Netrc),
        gate: Gate::Any,
        positives: &[
            "machine api.heroku.com login me@example.com password ⟦‹h32›⟧",
            "echo 'machine github.com login me password ⟦h‹a20›⟧' > ~/.netrc",
        ],
        negatives: &["machine api.heroku.com login me@example.com", "the machine password policy"],
    },
    Rule {
        id: "netrc-line",
        what: "a config directive `password X`: a .netrc entry over several lines, msmtprc, fetchmailrc, an IRC client's /set …password",
        // A directive named like any secret: the name-keyed rules' words.
        keywords: &[
            "password",
            "passwd",
            "passphrase",
            "secret",
            "token",
            "community",
            "apikey",
            "api_key",
            "psk",
        ],
        matcher: Matcher::Context(Engine::Netrc),
        gate: Gate::Any,
        positives: &[
            "  password ⟦Qz7‹a10›⟧",
            "login deploy password ⟦w4‹a14›⟧",
            "default login anonymous password ⟦w4‹a14›⟧",
            "password ⟦ZU*5!P2ad1Wy=3bX⟧",
            "/set irc.server.libera.sasl_password \"⟦Tundra+Orbit8203⟧\"",
            "poll imap.example.test protocol IMAP user \"dana\" password \"⟦Sequoia!Mango7278⟧\" ssl",
        ],
        negatives: &[
            "password reset",
            "- password policy",
            "  password",
            "password = $PW",
            "the password is wrong",
            // Prose wrapped in a docstring, from this Python's standard library.
            "                                  password combination.",
        ],
    },
    Rule {
        id: "debconf-password",
        what: "a debconf selection of type password, as a preseed file or debconf-set-selections gives it: d-i passwd/root-password password X",
        keywords: &["password"],
        matcher: Matcher::Context(Engine::Netrc),
        gate: Gate::Any,
        positives: &[
            "d-i passwd/user-password-again password ⟦-l*Oc‹a10›⟧",
            "echo \"mysql-server mysql-server/root_password password ⟦Wq‹a12›⟧\" | sudo debconf-set-selections",
        ],
        negatives: &[
            "d-i passwd/root-login boolean false",
            "d-i passwd/user-password password",
            "d-i passwd/root-password password $ROOT_PW",
            "Type the root password and press enter",
        ],
    },
    Rule {
        id: "snmp-community",
        what: "snmpd.conf community strings: rocommunity X, rwcommunity X, com2sec name source X",
        keywords: &["community", "com2sec"],
        matcher: Matcher::Context(Engine::Netrc),
        gate: Gate::Any,
        positives: &["rocommunity ⟦muSB.‹a12›⟧ 10.0.0.0/8", "com2sec readonly default ⟦Kq‹a12›⟧"],
        negatives: &["rocommunity public 10.0.0.0/8", "# rocommunity: see the community docs"],
    },
    Rule {
        id: "ipsec-secret",
        what: "strongSwan's ipsec.secrets: : PSK x, user : EAP x, : RSA key.pem passphrase",
        keywords: &[
            ": PSK",
            ": EAP",
            ": XAUTH",
            ": NTLM",
            ": RSA",
            ": ECDSA",
            ": ED25519",
            ": ED448",
            ": P12",
            ": PKCS8",
            ": BLISS",
            ": PIN",
        ],
        matcher: Matcher::Context(Engine::Ipsec),
        gate: Gate::Any,
        positives: &[
            "moon carol@example.org : PSK \"⟦Rv@‹a12›⟧\"",
            "carol : EAP \"⟦u%w‹a14›⟧\"",
            ": PSK 0s⟦‹b40›=⟧",
            ": RSA moon.key \"⟦Kq‹a12›⟧\"",
        ],
        negatives: &[
            ": RSA moon.key",
            ": RSA moon.key %prompt",
            "see the : PSK line below",
            "Key type : RSA 2048 bits",
            "Authentication : EAP MSCHAPv2",
        ],
    },
    Rule {
        id: "php-define",
        what: "PHP constants named like a secret: define('DB_PASSWORD', 'x')",
        keywords: &["define"],
        matcher: Matcher::Context(Engine::PhpDefine),
        gate: Gate::Call,
        positives: &["define( 'DB_PASSWORD', '⟦Wq‹a10›⟧' );", "define('SECURE_AUTH_KEY', '⟦‹b40›⟧');"],
        negatives: &["define( 'DB_NAME', 'wordpress' );", "define('DB_PASSWORD', getenv('DB_PASSWORD'));"],
    },
    Rule {
        id: "prose",
        what: "a secret given in words: \"my password is X\", \"the API token is X\"",
        keywords: &["password", "passphrase", "token", "secret"],
        matcher: Matcher::Context(Engine::Prose),
        gate: Gate::Sentence,
        positives: &[
            "the staging db password is ⟦Hx4‹a9›⟧, use it",
            "My password is ⟦r7‹a8›⟧.",
            "the API token is ⟦‹b40›⟧",
        ],
        negatives: &[
            "the password is wrong",
            "the token is None",
            "the token is valid for 10 minutes",
            "the secret is out",
            "if the password is empty, ask",
        ],
    },
    Rule {
        id: "mnemonic",
        what: "a wallet's recovery phrase: 12, 15, 18, 21 or 24 BIP-39 words standing as a whole value on a line naming a mnemonic, seed or phrase",
        keywords: &["mnemonic", "seed", "phrase"],
        matcher: Matcher::Context(Engine::Mnemonic),
        gate: Gate::Any,
        positives: &[
            "MNEMONIC=\"⟦velvet wagon salute nephew wagon velvet ripple voyage pioneer nephew humble gravity⟧\"",
            "  mnemonic: ⟦abandon ability able about above absent absorb abstract absurd abuse access accident⟧",
        ],
        negatives: &[
            // Eleven words, and twelve inside a sentence.
            "MNEMONIC=\"velvet wagon salute nephew wagon velvet ripple voyage pioneer nephew humble\"",
            "the seed phrase is velvet wagon salute nephew wagon velvet ripple voyage pioneer nephew humble gravity now",
            "seed: random seed for the test",
        ],
    },
    Rule {
        id: "sql-password",
        what: "a password set in SQL: CREATE USER/ROLE … PASSWORD 'x' (PostgreSQL)",
        keywords: &["password"],
        matcher: Matcher::Context(Engine::Database),
        // A quote for the value (`E'…'`, `N'…'`, `$$…$$` too); `(` for `PASSWORD('x')`; `=`
        // and `FOR` for `SET PASSWORD [FOR u] = 'x'` when `SET` ends the line before (a
        // continued command).
        gate: Gate::Then(b"'\"=Ff(EeNn$"),
        positives: &[
            "CREATE ROLE ci LOGIN PASSWORD '⟦q7‹a10›⟧';",
            "alter user ci with encrypted password '⟦Zx‹a12›⟧'",
        ],
        negatives: &["ALTER ROLE ci WITH PASSWORD NULL;", "the password 'changeme' is the default"],
    },
    Rule {
        id: "sql-identified",
        what: "a password set in SQL or given to SQL*Plus: IDENTIFIED BY 'x' (MySQL, Oracle), SET PASSWORD = 'x', sqlplus user/x@db",
        keywords: &["identified", "set password", "sqlplus", "expdp", "impdp", "sqlldr", "dgmgrl", "rman"],
        matcher: Matcher::Context(Engine::Database),
        gate: Gate::Any,
        positives: &[
            "CREATE USER 'ci'@'%' IDENTIFIED BY '⟦Kp‹a10›⟧';",
            "SET PASSWORD FOR 'ci'@'%' = '⟦Wd‹a11›⟧';",
            "sqlplus ci/⟦Hb‹a9›⟧@orcl",
        ],
        negatives: &["CREATE USER 'ci'@'%' IDENTIFIED BY RANDOM PASSWORD;", "sqlplus /nolog"],
    },
    Rule {
        id: "redis-auth",
        what: "a Redis password: AUTH [user] x, requirepass x (redis.conf, CONFIG SET)",
        keywords: &["AUTH", "requirepass", "masterauth"],
        matcher: Matcher::Context(Engine::Database),
        gate: Gate::Word,
        positives: &["127.0.0.1:6379> AUTH ⟦Rd‹a12›⟧", "redis-cli CONFIG SET requirepass ⟦Vq‹a14›⟧"],
        negatives: &["AUTH failed: WRONGPASS invalid username-password pair", "# requirepass foobared"],
    },
    Rule {
        id: "redis-acl",
        what: "a Redis ACL user's passwords and their hashes: user app on >x (users.acl, ACL SETUSER)",
        // An ACL line without a key pattern or a command rule grants nothing.
        keywords: &["SETUSER", "setuser", " +@", " ~*", " &*", "allkeys", "allcommands", " on >", " on #"],
        matcher: Matcher::Context(Engine::RedisAcl),
        gate: Gate::Any,
        positives: &[
            "user app on >⟦aS‹a16›⟧ ~app:* &* +@read",
            "127.0.0.1:6379> ACL SETUSER ci on >⟦Rd‹a12›⟧ +@all ~*",
            "user metrics on #⟦‹h64›⟧ ~* +info",
            "redis-cli acl setuser bob on '>⟦s3‹a12›⟧' ~* +@all",
            "user worker on >⟦pa‹a10›⟧",
        ],
        negatives: &[
            "user default on nopass ~* &* +@all",
            "user app off resetpass ~app:* +@read",
            "The user and password fields are sent as <form> data +@",
        ],
    },
    Rule {
        id: "mongodb-password",
        what: "a MongoDB password: db.createUser({user: …, pwd: \"x\"}), db.auth(\"u\", \"x\")",
        keywords: &["createUser", "updateUser", "db.auth", "changeUserPassword"],
        matcher: Matcher::Context(Engine::Database),
        gate: Gate::Any,
        positives: &[
            "db.createUser({user: \"ci\", pwd: \"⟦Mg‹a12›⟧\", roles: []})",
            "db.auth(\"ci\", \"⟦Mg‹a10›⟧\")",
        ],
        negatives: &["db.createUser({user: \"ci\", pwd: passwordPrompt(), roles: []})"],
    },
    Rule {
        id: "xml-named",
        what: "XML elements named by a `name` or `key` attribute like a secret (Android strings, Hibernate properties)",
        keywords: NAME_WORDS,
        matcher: Matcher::Context(Engine::Xml),
        gate: Gate::Named,
        positives: &[
            r#"    <string name="backend_api_secret">⟦‹a40›⟧</string>"#,
            r#"<property name="hibernate.connection.password">⟦Gn‹a12›!0u⟧</property>"#,
        ],
        negatives: &[
            r#"<string name="password_hint">Enter your password</string>"#,
            r#"<property name="hibernate.connection.password">${DB_PASSWORD}</property>"#,
        ],
    },
    Rule {
        id: "xml",
        what: "XML elements named like a secret (Maven settings.xml, web.config, plists): <password>X</password>",
        keywords: NAME_WORDS,
        matcher: Matcher::Context(Engine::Xml),
        gate: Gate::Tag,
        positives: &[
            "      <password>⟦Jd4Kw9Vn2Hx7⟧</password>",
            "<server><id>central</id><password>⟦Mv8#qL2wZt⟧</password></server>",
            "<apiKey>⟦‹h32›⟧</apiKey>",
        ],
        negatives: &[
            "<password>${env.MAVEN_PASSWORD}</password>",
            "<token-type>bearer</token-type>",
            "<password></password>",
            "<password>x</passwd>",
        ],
    },
];

//! A second corpus, apart from the rules' own examples: credential files in the syntax
//! their formats document, each with a freshly generated secret planted where the format
//! puts it, read every way an agent shows a file. Recall is scored by format and by view;
//! the clean side is real code (`redact_transcript.rs`).

use std::collections::BTreeMap;

use lokust::redact::{self, Report};

/// A small deterministic generator, so a failure names the secret it missed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn pick(&mut self, alphabet: &[u8], n: usize) -> String {
        (0..n).map(|_| alphabet[(self.next() % alphabet.len() as u64) as usize] as char).collect()
    }
}

const ALNUM: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
const B64: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// What a password typed by a person looks like: letters, digits and one symbol.
fn password(r: &mut Rng) -> String {
    format!("{}{}{}", r.pick(ALNUM, 6), ["!", "#", "%", "@", "&"][(r.next() % 5) as usize], r.pick(ALNUM, 5))
}

/// A file as its format documents it, with `{S}` where the secret goes: (format, file name,
/// text, the secret).
fn files(r: &mut Rng) -> Vec<(&'static str, &'static str, String, String)> {
    let mut out = Vec::new();
    let mut add = |format: &'static str, name: &'static str, template: &str, secret: String| {
        out.push((format, name, template.replace("{S}", &secret), secret));
    };
    add(
        "aws credentials",
        ".aws/credentials",
        "[default]\naws_access_key_id = AKIAIOSFODNN7Q2WERTY\naws_secret_access_key = {S}\nregion = eu-west-1\n",
        r.pick(B64, 40),
    );
    add("netrc", ".netrc", "machine api.example.com\n  login deploy\n  password {S}\n", password(r));
    add("my.cnf", ".my.cnf", "[client]\nuser=app\npassword={S}\nhost=db.internal\n", password(r));
    add(
        "wireguard",
        "wg0.conf",
        "[Interface]\nAddress = 10.0.0.2/32\nPrivateKey = {S}\nListenPort = 51820\n",
        format!("{}=", r.pick(B64, 43)),
    );
    add(
        "django settings",
        "settings.py",
        "DEBUG = False\nSECRET_KEY = '{S}'\nALLOWED_HOSTS = ['example.com']\n",
        r.pick(ALNUM, 50),
    );
    add(
        "java properties",
        "application.properties",
        "spring.datasource.url=jdbc:postgresql://db:5432/app\nspring.datasource.password={S}\n",
        password(r),
    );
    add("tfvars", "terraform.tfvars", "region      = \"eu-west-1\"\ndb_password = \"{S}\"\n", password(r));
    add(
        "wp-config",
        "wp-config.php",
        "<?php\ndefine( 'DB_NAME', 'wordpress' );\ndefine( 'DB_PASSWORD', '{S}' );\n",
        password(r),
    );
    // `=>` pairs, as Laravel's, Rails's, Perl DBI's and puppetlabs-mysql's documentation
    // write them.
    add(
        "laravel database.php",
        "config/database.php",
        "<?php\n\nreturn [\n    'connections' => [\n        'mysql' => [\n            'driver' => 'mysql',\n            'host' => '127.0.0.1',\n            'username' => 'forge',\n            'password' => '{S}',\n        ],\n    ],\n];\n",
        password(r),
    );
    add(
        "ruby hash",
        "config/environments/production.rb",
        "config.action_mailer.smtp_settings = {\n  :address => 'smtp.example.com',\n  :user_name => 'app',\n  :password => '{S}',\n  :authentication => 'plain'\n}\n",
        password(r),
    );
    add(
        "perl list",
        "lib/App/Config.pm",
        "my %config = (\n    dsn      => 'dbi:Pg:dbname=app',\n    user     => 'app',\n    password => '{S}',\n);\n",
        password(r),
    );
    add(
        "puppet resource",
        "manifests/db.pp",
        "mysql::db { 'app':\n  user     => 'app',\n  password => '{S}',\n  host     => 'localhost',\n}\n",
        password(r),
    );
    // Compose's interpolation (`${VAR:-default}`) and an extension field's YAML anchor, as
    // the Compose specification writes them.
    add(
        "compose default",
        "compose.yaml",
        "services:\n  db:\n    image: postgres:16\n    environment:\n      POSTGRES_USER: app\n      POSTGRES_PASSWORD: ${POSTGRES_PASSWORD:-{S}}\n",
        password(r),
    );
    add(
        "compose anchor",
        "compose.yaml",
        "x-db-password: &db-password {S}\nservices:\n  db:\n    environment:\n      POSTGRES_PASSWORD: *db-password\n",
        password(r),
    );
    add(
        "datadog yaml",
        "datadog.yaml",
        "site: datadoghq.eu\napi_key: {S}\nlogs_enabled: true\n",
        r.pick(b"0123456789abcdef", 32),
    );
    add(
        "dotenv",
        ".env",
        "NODE_ENV=production\nSTRIPE_SECRET_KEY={S}\n",
        format!("sk_live_{}", r.pick(ALNUM, 24)),
    );
    add(
        "npmrc",
        ".npmrc",
        "registry=https://registry.npmjs.org/\n//registry.npmjs.org/:_authToken={S}\n",
        format!("npm_{}", r.pick(ALNUM, 36)),
    );
    add(
        "pypirc",
        ".pypirc",
        "[distutils]\nindex-servers = pypi\n\n[pypi]\nusername = __token__\npassword = {S}\n",
        format!("pypi-{}", r.pick(ALNUM, 60)),
    );
    add("git-credentials", ".git-credentials", "https://deploy:{S}@git.example.com\n", password(r));
    add(
        "kubeconfig",
        ".kube/config",
        "apiVersion: v1\nkind: Config\nusers:\n- name: ci\n  user:\n    token: {S}\n",
        r.pick(ALNUM, 40),
    );
    add(
        "docker config",
        ".docker/config.json",
        "{\n  \"auths\": {\n    \"registry.example.com\": {\n      \"auth\": \"{S}\"\n    }\n  }\n}\n",
        format!("{}=", r.pick(B64, 31)),
    );
    // A secret's name and its value as two keys of one entry, as each format's reference
    // writes them: Kubernetes' "Define Environment Variables for a Container" (quoted and
    // bare), an ECS task definition's `environment`, a CloudFormation parameters file, an
    // Elastic Beanstalk `OptionSettings` list, the Terraform Kubernetes provider's `env`
    // block, and a YAML flow sequence.
    add(
        "k8s env",
        "deploy.yaml",
        "spec:\n  containers:\n  - name: web\n    image: nginx:1.25\n    env:\n    - name: DB_HOST\n      value: db.internal\n    - name: DB_PASSWORD\n      value: \"{S}\"\n    - name: LOG_LEVEL\n      value: info\n",
        password(r),
    );
    add(
        "k8s env bare",
        "pod.yml",
        "env:\n  - name: API_TOKEN\n    value: {S}\n  - name: PORT\n    value: \"8080\"\n",
        r.pick(ALNUM, 32),
    );
    add(
        "ecs task definition",
        "task-definition.json",
        "{\n  \"family\": \"web\",\n  \"containerDefinitions\": [\n    {\n      \"name\": \"web\",\n      \"environment\": [\n        {\n          \"name\": \"DB_PASSWORD\",\n          \"value\": \"{S}\"\n        }\n      ]\n    }\n  ]\n}\n",
        password(r),
    );
    add(
        "cloudformation parameters",
        "params.json",
        "[\n  {\n    \"ParameterKey\": \"DBPassword\",\n    \"ParameterValue\": \"{S}\"\n  }\n]\n",
        password(r),
    );
    add(
        "beanstalk option settings",
        "options.json",
        "[\n  {\n    \"Namespace\": \"aws:elasticbeanstalk:application:environment\",\n    \"OptionName\": \"STRIPE_SECRET_KEY\",\n    \"Value\": \"{S}\"\n  }\n]\n",
        format!("sk_live_{}", r.pick(ALNUM, 24)),
    );
    add(
        "terraform env block",
        "main.tf",
        "env {\n  name  = \"DB_PASSWORD\"\n  value = \"{S}\"\n}\n",
        password(r),
    );
    add(
        "yaml flow env",
        "job.yaml",
        "env: [{name: DB_USER, value: app}, {name: DB_PASSWORD, value: {S}}]\n",
        password(r),
    );
    // Forms a stranger's attack on the entry reading found: what `aws ssm get-parameter
    // --with-decryption` prints, a HAR file's header entry, `terraform plan`'s output, an
    // entry commented out, and Elastic Beanstalk's `.ebextensions`.
    add(
        "ssm get-parameter",
        "ssm.json",
        "{\n    \"Parameter\": {\n        \"Name\": \"/web/prod/DB_PASSWORD\",\n        \"Type\": \"SecureString\",\n        \"Value\": \"{S}\",\n        \"Version\": 3\n    }\n}\n",
        password(r),
    );
    add(
        "har header",
        "session.har",
        "{\"request\": {\"headers\": [\n  {\"name\": \"Accept\", \"value\": \"*/*\"},\n  {\"name\": \"Authorization\", \"value\": \"Bearer {S}\"}\n]}}\n",
        r.pick(ALNUM, 40),
    );
    add(
        "terraform plan",
        "plan.txt",
        "      + env {\n          + name  = \"DB_PASSWORD\"\n          + value = \"{S}\"\n        }\n",
        password(r),
    );
    add(
        "commented k8s env",
        "deploy.yaml",
        "        env:\n        # - name: DB_PASSWORD\n        #   value: {S}\n        - name: PORT\n          value: \"8080\"\n",
        password(r),
    );
    add(
        "ebextensions",
        ".ebextensions/env.config",
        "option_settings:\n  - namespace: aws:elasticbeanstalk:application:environment\n    option_name: DB_PASSWORD\n    value: {S}\n",
        password(r),
    );
    // Hadoop's configuration XML, as its documentation writes a `<property>`.
    add(
        "hadoop core-site",
        "core-site.xml",
        "<configuration>\n  <property>\n    <name>fs.s3a.access.key</name>\n    <value>AKIAIOSFODNN7Q2WERTY</value>\n  </property>\n  <property>\n    <name>fs.s3a.secret.key</name>\n    <value>{S}</value>\n  </property>\n</configuration>\n",
        r.pick(B64, 40),
    );
    add(
        "openssh key",
        ".ssh/id_ed25519",
        "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n{S}\n-----END OPENSSH PRIVATE KEY-----\n",
        r.pick(B64, 70),
    );
    out
}

/// The ways an agent shows a file: as it is, as Claude Code's `Read` numbers it, `cat -n`,
/// `grep -n` with its path, the lines a diff adds, and the whole file as one JSON string
/// (a tool result in a transcript).
fn views(name: &str, text: &str) -> Vec<(&'static str, String, bool)> {
    let lines: Vec<&str> = text.lines().collect();
    let each = |f: &dyn Fn(usize, &str) -> String| {
        lines.iter().enumerate().map(|(i, l)| f(i, l)).collect::<String>()
    };
    vec![
        ("plain", text.to_string(), false),
        ("Read", each(&|i, l| format!("{:>6}\u{2192}{l}\n", i + 1)), false),
        ("cat -n", each(&|i, l| format!("{:>6}\t{l}\n", i + 1)), false),
        ("grep -n", each(&|i, l| format!("{name}:{}:{l}\n", i + 1)), false),
        ("diff", each(&|_, l| format!("+{l}\n")), false),
        ("JSON string", serde_json::json!({"type": "tool_result", "content": text}).to_string(), true),
    ]
}

#[test]
fn planted_secrets_are_caught_in_every_format_and_every_view() {
    let mut r = Rng(0x2545_f491_4f6c_dd1d);
    let mut score: BTreeMap<(&str, &str), (usize, usize)> = BTreeMap::new();
    let mut missed = Vec::new();
    for _round in 0..20 {
        for (format, name, text, secret) in files(&mut r) {
            for (view, shown, json) in views(name, &text) {
                let out = if json {
                    redact::redact_json_line(&shown, &mut Report::default()).into_owned()
                } else {
                    redact::redact(&shown).into_owned()
                };
                let caught = !out.contains(&secret);
                let cell = score.entry((format, view)).or_default();
                cell.0 += usize::from(caught);
                cell.1 += 1;
                if !caught && missed.len() < 10 {
                    missed.push(format!("{format} / {view}: {secret}\n{out}"));
                }
            }
        }
    }
    let (caught, total) = score.values().fold((0, 0), |(c, t), (a, b)| (c + a, t + b));
    println!("recall {caught}/{total} over {} formats × views", score.len());
    for ((format, view), (c, t)) in &score {
        if c != t {
            println!("  {format:>16} / {view:<12} {c}/{t}");
        }
    }
    assert!(missed.is_empty(), "missed:\n{}", missed.join("\n---\n"));
}

/// Shell lines of the families a stranger found leaking, each with a fresh secret, as a
/// terminal shows them (plain, zsh and fish history) and as a transcript holds them (a
/// `Bash` tool call's JSON).
fn shell_lines(r: &mut Rng) -> Vec<(&'static str, String, String)> {
    let mut out = Vec::new();
    let mut add = |family: &'static str, template: &str, secret: String| {
        out.push((family, template.replace("{S}", &secret), secret));
    };
    add(
        "discord webhook",
        "curl -H 'Content-Type: application/json' -d '{\"content\":\"hi\"}' https://discord.com/api/webhooks/112233445566778899/{S}",
        r.pick(ALNUM, 68),
    );
    add(
        "teams webhook",
        "curl -d @card.json https://acme.webhook.office.com/webhookb2/0a1b2c3d-0000-4000-8000-000000000001@0a1b2c3d-0000-4000-8000-000000000002/IncomingWebhook/{S}/0a1b2c3d-0000-4000-8000-000000000003",
        r.pick(b"0123456789abcdef", 32),
    );
    add(
        "ifttt webhook",
        "curl -X POST https://maker.ifttt.com/trigger/door_open/with/key/{S}",
        r.pick(ALNUM, 22),
    );
    add(
        "git credential printf",
        "printf 'protocol=https\\nhost=git.example.com\\nusername=ci\\npassword={S}\\n' | git credential approve",
        password(r),
    );
    add(
        "git credential $''",
        "git credential approve <<< $'protocol=https\\nhost=git.example.com\\npassword={S}\\n'",
        password(r),
    );
    add("key echoed into a file", "echo \"{S}\" >> ~/.ssh/id_ed25519", r.pick(B64, 70));
    add("token written to a file", "printf '%s' {S} > ~/.config/acme/token", r.pick(ALNUM, 40));
    add("base64 of a literal", "echo -n '{S}' | base64", password(r));
    add(
        "password on stdin",
        "echo '{S}' | docker login registry.example.com -u ci --password-stdin",
        password(r),
    );
    add("openssl passwd", "openssl passwd -6 '{S}'", password(r));
    add(
        "cloudformation parameters",
        "aws cloudformation create-stack --stack-name app --template-body file://app.yaml --parameters ParameterKey=DBUser,ParameterValue=app ParameterKey=DBPassword,ParameterValue={S}",
        password(r),
    );
    add(
        "ecs container definitions",
        "aws ecs register-task-definition --family web --container-definitions '[{\"name\":\"web\",\"image\":\"nginx\",\"environment\":[{\"name\":\"DB_PASSWORD\",\"value\":\"{S}\"}]}]'",
        password(r),
    );
    add("mysql -p", "mysql -h db -u root -p{S} app", password(r));
    add("sshpass", "sshpass -p '{S}' ssh deploy@host", password(r));
    add("a command in a string", "subprocess.run(\"mysql -u root -p{S} app\", shell=True)", password(r));
    out
}

#[test]
fn shell_families_are_caught_in_every_view() {
    let mut r = Rng(0x9e37_79b9_7f4a_7c15);
    let mut score: BTreeMap<(&str, &str), (usize, usize)> = BTreeMap::new();
    let mut missed = Vec::new();
    for _round in 0..20 {
        for (family, line, secret) in shell_lines(&mut r) {
            let shown = [
                ("plain", line.clone(), false),
                ("zsh history", format!(": 1700000000:0;{line}"), false),
                ("fish history", format!("- cmd: {line}"), false),
                (
                    "Bash tool call",
                    serde_json::json!({"name": "Bash", "input": {"command": line}}).to_string(),
                    true,
                ),
            ];
            for (view, text, json) in shown {
                let out = if json {
                    redact::redact_json_line(&text, &mut Report::default()).into_owned()
                } else {
                    redact::redact(&text).into_owned()
                };
                let caught = !out.contains(&secret);
                let cell = score.entry((family, view)).or_default();
                cell.0 += usize::from(caught);
                cell.1 += 1;
                if !caught && missed.len() < 10 {
                    missed.push(format!("{family} / {view}: {secret}\n{out}"));
                }
            }
        }
    }
    let (caught, total) = score.values().fold((0, 0), |(c, t), (a, b)| (c + a, t + b));
    println!("recall {caught}/{total} over {} families × views", score.len());
    assert!(missed.is_empty(), "missed:\n{}", missed.join("\n---\n"));
}

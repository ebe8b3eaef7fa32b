/**
 * Credential shapes that must come out redacted wherever they sit, grouped by family, and look-alikes that must stay:
 * shared by the redaction unit tests (which report the redaction rate over the whole corpus) and the ingest superset
 * test. Decision 0027 says which shapes are found and which are knowingly not.
 */
// Built from parts so that this file does not itself look like it holds secrets.
const j = (...parts: string[]) => parts.join("");
const A36 = "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8";
const HEX32 = "0123456789abcdef0123456789abcdef";
const PEM_BODY =
  "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7\nVJTUt9Us8cKjMzEfYyjiWA4R4/M2bS1GB4t7NXp98C3SC6dVMvDuic";
export const pem = (label: string) => j("-----BEGIN ", label, "-----\n", PEM_BODY, "\n-----END ", label, "-----");
const JWT = j("eyJhbGciOiJIUzI1NiJ9", ".", "eyJzdWIiOiIxMjM0NTY3ODkwIn0", ".", "c2lnbmF0dXJlc2lnbmF0dXJl");
const B62_60 = "Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Jh1Gf0EdCbAaZx9Yw8Vu7Ts6Rq5Po4Nm3Lk2";
const HEX64 = HEX32 + HEX32;
const UUID = "0b6c7a2e-4c1f-4e8a-9d3b-2f1e0a9c8b7d";

/** A shape: its name, a text holding one secret, and that secret (after redaction it is gone). */
type Shape = [string, string, string];

/** The shapes by family. */
export const SHAPE_FAMILIES: Record<string, Shape[]> = {
  providers: [
    // cloud keys
    ["AWS access key id", j("AKIA", "IOSFODNN7EXAMPLE"), j("AKIA", "IOSFODNN7EXAMPLE")],
    [
      "AWS secret in an assignment",
      j("aws_secret_access_key=", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"),
      "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    ],
    [
      "Google API key",
      j("key AIza", "SyA1234567890abcdefghijklmnopqrstuv"),
      j("AIza", "SyA1234567890abcdefghijklmnopqrstuv"),
    ],
    [
      "Google OAuth access token",
      j("ya29.", "a0AfH6SMBx1234567890abcdefXYZ"),
      j("ya29.", "a0AfH6SMBx1234567890abcdefXYZ"),
    ],
    [
      "Azure storage connection string",
      j(
        "DefaultEndpointsProtocol=https;AccountName=acme;AccountKey=",
        "Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MA==",
        ";EndpointSuffix=core.windows.net",
      ),
      "Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MA==",
    ],
    [
      "Azure SAS signature",
      j("https://acme.blob.core.windows.net/c/b?sv=2022-11-02&sig=", "AbCdEf0123456789%2Bxyz%3D"),
      "AbCdEf0123456789%2Bxyz%3D",
    ],
    ["DigitalOcean token", j("dop_v1_", HEX32, HEX32), j("dop_v1_", HEX32, HEX32)],
    // tokens
    ["OpenAI key", j("sk-", "proj-", A36), j("proj-", A36)],
    ["Anthropic key", j("sk-", "ant-api03-", A36), j("ant-api03-", A36)],
    ["Stripe live key", j("sk_", "live_", "4eC39HqLyjWDarjtT1zdp7dc"), "4eC39HqLyjWDarjtT1zdp7dc"],
    ["Stripe webhook secret", j("whsec_", A36), A36],
    ["GitHub token", j("ghp_", A36), A36],
    ["GitHub fine-grained token", j("github_pat_", "11ABCDEFG0123456789_", A36), A36],
    ["GitLab token", j("glpat-", "xYz0123456789abcdEFGH"), "xYz0123456789abcdEFGH"],
    ["Slack bot token", j("xoxb-", "123456789012-1234567890123-", "AbCdEfGhIjKl"), "1234567890123-"],
    ["npm token", j("npm_", A36), A36],
    ["Hugging Face token", j("hf_", "AbCdEfGhIjKlMnOpQrStUvWxYzAbCdEfGh"), "AbCdEfGhIjKlMnOpQrStUvWxYzAbCdEfGh"],
    ["SendGrid key", j("SG.", "AbCdEfGhIjKlMnOpQr", ".", "StUvWxYz0123456789ab"), "AbCdEfGhIjKlMnOpQr"],
    ["HashiCorp Vault token", j("hvs.", "CAESIAbCdEfGhIjKlMnOpQrStUv"), "CAESIAbCdEfGhIjKlMnOpQrStUv"],
    ["Twilio API key", j("SK", HEX32), HEX32],
    ["Mailgun key", j("key-", HEX32), HEX32],
    ["our runtime key", j("rck_", A36), A36],
    ["a JWT", `session ${JWT}`, JWT.slice(0, 30)],
    ["a bearer token", "Authorization: Bearer 3f9a7c1e0b2d4f6a8c0e2b4d", "3f9a7c1e0b2d4f6a8c0e2b4d"],
    ["a token scheme", "token 9f8e7d6c5b4a39281706f5e4", "9f8e7d6c5b4a39281706f5e4"],
    ["basic credentials", "basic dXNlcjpwYXNzd29yZDEyMw==", "dXNlcjpwYXNzd29yZDEyMw=="],
    ["a vault placeholder", "vault://kv/records/api-token", "kv/records"],
  ],
  urls: [
    ["a password in the user info", "postgres://app:hunter2x@db:5432/custody", "hunter2x"],
    [
      "a token as the user info",
      j("https://", "9f8e7d6c5b4a39281706f5e4d3c2b1a0", "@github.com/acme/repo.git"),
      "9f8e7d6c5b4a39281706f5e4d3c2b1a0",
    ],
    ["an access token in the query", "https://api.example.com/v1?access_token=Zx9Yw8Vu7Ts6&page=2", "Zx9Yw8Vu7Ts6"],
    ["an API key in the query", "https://api.example.com/v1?page=2&api_key=Zx9Yw8Vu7Ts6", "Zx9Yw8Vu7Ts6"],
    ["a token in the fragment", "https://app.example.com/callback#id_token=Zx9Yw8Vu7Ts6&state=1", "Zx9Yw8Vu7Ts6"],
    [
      "an S3 presigned signature",
      "https://b.s3.amazonaws.com/k?X-Amz-Security-Token=FwoGZXIvYXdzEJr0123",
      "FwoGZXIvYXdzEJr0123",
    ],
    [
      "a Slack webhook",
      j("https://hooks.slack.com/services/", "T00000000/B00000000/", "XXXXXXXXXXXXXXXXXXXXXXXX"),
      "XXXXXXXXXXXXXXXXXXXXXXXX",
    ],
    [
      "a Discord webhook",
      j("https://discord.com/api/webhooks/", "123456789012345678/", "AbCdEfGhIjKlMnOpQrStUvWxYz-0123456789"),
      "AbCdEfGhIjKlMnOpQrStUvWxYz-0123456789",
    ],
  ],
  "headers and assignments": [
    ["a cookie header line", "GET /x HTTP/1.1\nCookie: sid=s3ss10n-abc; theme=dark\nAccept: */*", "s3ss10n-abc"],
    ["a set-cookie header line", "Set-Cookie: session=Zx9Yw8Vu7Ts6; Path=/; HttpOnly", "Zx9Yw8Vu7Ts6"],
    ["an API key header line", "X-Api-Key: 9f8e7d6c5b4a3928", "9f8e7d6c5b4a3928"],
    [
      "a digest authorization header",
      'Authorization: Digest username="u", response="6629fae49393a05397450978507c4ef1"',
      "6629fae49393a05397450978507c4ef1",
    ],
    ["an env assignment", "export DB_PASSWORD=correct-horse-battery", "correct-horse-battery"],
    ["a YAML password", 'password: "no digits here"', "no digits here"],
    ["a JSON fragment in text", '{"client_secret": "abc.def.ghi"}', "abc.def.ghi"],
  ],
  "private keys": [
    ["a PEM private key", pem("PRIVATE KEY"), "MIIEvQIBADAN"],
    ["a PEM EC private key", pem("EC PRIVATE KEY"), "MIIEvQIBADAN"],
    ["an encrypted PEM private key", pem("ENCRYPTED PRIVATE KEY"), "MIIEvQIBADAN"],
    ["a PGP private key block", pem("PGP PRIVATE KEY BLOCK"), "MIIEvQIBADAN"],
    ["a private key cut short", j("-----BEGIN OPENSSH PRIVATE KEY-----\n", PEM_BODY), "MIIEvQIBADAN"],
    [
      "an age secret key",
      j("AGE-SECRET-KEY-1", "QQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQ"),
      "QQQQQQQQQQQQQQQQQQQQ",
    ],
  ],
  "connection strings": [
    [
      "an ODBC Pwd",
      j("Driver={ODBC Driver 18 for SQL Server};Server=db;Uid=app;Pwd=", "Sup3rS3cret!", ";"),
      "Sup3rS3cret!",
    ],
    ["an ODBC password in braces", j("Driver={ODBC};Server=db;Uid=app;PWD={", "Sup3r;S3cret", "};"), "Sup3r;S3cret"],
    [
      "an ADO.NET SQL Server Password",
      j("Server=tcp:db.database.windows.net,1433;Initial Catalog=app;User ID=app;Password=", "Adm1n-Pa55", ";"),
      "Adm1n-Pa55",
    ],
    ["JDBC MySQL parameters", j("jdbc:mysql://db:3306/app?user=app&password=", "Jdbc-S3cret-1"), "Jdbc-S3cret-1"],
    [
      "JDBC SQL Server properties",
      j("jdbc:sqlserver://db:1433;databaseName=app;user=sa;password=", "Sql-S3cret-2", ";"),
      "Sql-S3cret-2",
    ],
    ["JDBC Oracle thin user/password", j("jdbc:oracle:thin:scott/", "T1ger-Pass", "@db:1521/orcl"), "T1ger-Pass"],
    ["sqlplus user/password", j("sqlplus scott/", "T1ger-Pass2", "@orcl"), "T1ger-Pass2"],
    ["libpq conninfo", j("host=db port=5432 user=app password=", "Lib-pq-S3cret", " dbname=app"), "Lib-pq-S3cret"],
    ["libpq conninfo quoted", j("host=db user=app password='", "pq s3cret words", "' dbname=app"), "pq s3cret words"],
    ["a MongoDB SRV URI", j("mongodb+srv://app:", "M0ngo-S3cret", "@cluster0.example.mongodb.net/app"), "M0ngo-S3cret"],
    ["a Redis URI without a user", j("redis://:", "R3dis-S3cret", "@cache:6379/0"), "R3dis-S3cret"],
    ["an AMQP URI", j("amqps://app:", "Rabb1t-S3cret", "@mq.example.com/vhost"), "Rabb1t-S3cret"],
    ["a MySQL URI", j("mysql://root:", "My-S3cret-9", "@db:3306/app"), "My-S3cret-9"],
    ["a PostgreSQL URI with options", j("postgresql://app:", "Pg-S3cret-7", "@db/app?sslmode=require"), "Pg-S3cret-7"],
    ["a Snowflake URI", j("snowflake://user:", "Sn0w-S3cret", "@account/db"), "Sn0w-S3cret"],
    ["a Spring datasource property", j("spring.datasource.password=", "Spr1ng-S3cret"), "Spr1ng-S3cret"],
  ],
  "command lines": [
    ["mysql -p", j("mysql -u root -p", "S3cretPass", " app"), "S3cretPass"],
    ["mysqldump -p quoted", j("mysqldump -u root -p'", "Dump-S3cret", "' app > app.sql"), "Dump-S3cret"],
    ["mariadb -p", j("mariadb -h db -u app -p", "Maria-S3cret"), "Maria-S3cret"],
    ["mysql --password=", j("mysql --password=", "Long-S3cret-1", " app"), "Long-S3cret-1"],
    ["mysqladmin --password value", j("mysqladmin --password ", "Adm-Flag-S3cret-3", " status"), "Adm-Flag-S3cret-3"],
    ["a --token value", j("vercel deploy --token ", "Ver1cel-T0ken-Value", " --prod"), "Ver1cel-T0ken-Value"],
    ["a quoted --api-key value", j('tool run --api-key "', "quoted key words", '"'), "quoted key words"],
    ["sshpass -p quoted", j("sshpass -p '", "Ssh-S3cret!", "' ssh deploy@host"), "Ssh-S3cret!"],
    ["sshpass -p attached", j("sshpass -p", "SshS3cret2", " ssh deploy@host"), "SshS3cret2"],
    ["curl -u", j("curl -u admin:", "Curl-S3cret-4", " https://api.example.com/x"), "Curl-S3cret-4"],
    ["curl --user=", j("curl --user=admin:", "Curl-S3cret-5", " https://api.example.com/x"), "Curl-S3cret-5"],
    ["curl -u quoted", j('curl -s -u "admin:', "Curl S3cret 6", '" https://x.example'), "Curl S3cret 6"],
    ["redis-cli -a", j("redis-cli -h cache -a ", "R3dis-Cli-S3cret", " ping"), "R3dis-Cli-S3cret"],
    ["docker login -p", j("docker login -u ci -p ", "D0cker-S3cret", " registry.example.com"), "D0cker-S3cret"],
    [
      "mongosh -p",
      j("mongosh -u admin -p ", "M0ngo-Cli-S3cret", " --authenticationDatabase admin"),
      "M0ngo-Cli-S3cret",
    ],
    [
      "curl with an Authorization header",
      "curl -H 'Authorization: Bearer 3f9a7c1e0b2d4f6a8c0e2b4d' https://x",
      "3f9a7c1e0b2d4f6a8c0e2b4d",
    ],
    ["openssl -passin pass:", j("openssl rsa -in k.pem -passin pass:", "Ssl-S3cret-8"), "Ssl-S3cret-8"],
  ],
  "environment assignments": [
    ["PGPASSWORD=", j("PGPASSWORD=", "hunter2hunter2", " psql -h db -U app"), "hunter2hunter2"],
    ["MYSQL_PWD=", j("MYSQL_PWD=", "My-Pwd-S3cret", " mysql -u app"), "My-Pwd-S3cret"],
    ["REDIS_PASSWORD=", j("REDIS_PASSWORD=", "R3dis-Env-S3cret"), "R3dis-Env-S3cret"],
    ["REDISCLI_AUTH=", j("REDISCLI_AUTH=", "R3dis-Auth-S3cret", " redis-cli"), "R3dis-Auth-S3cret"],
    ["RABBITMQ_DEFAULT_PASS=", j("RABBITMQ_DEFAULT_PASS=", "Rabb1t-Pass-S3cret"), "Rabb1t-Pass-S3cret"],
    ["MONGO_INITDB_ROOT_PASSWORD=", j("MONGO_INITDB_ROOT_PASSWORD=", "M0ngo-Root-S3cret"), "M0ngo-Root-S3cret"],
    ["SSHPASS=", j("SSHPASS='", "Ssh-Env-S3cret", "' sshpass -e ssh host"), "Ssh-Env-S3cret"],
    ["docker run -e", j("docker run -e POSTGRES_PASSWORD=", "Pg-Env-S3cret", " postgres:16"), "Pg-Env-S3cret"],
    ["a Windows set", j("set DB_PASS=", "Win-S3cret-1"), "Win-S3cret-1"],
  ],
  "config files": [
    ["an INI pass line", j("[database]\nuser=app\npass=", "Ini-S3cret-1", "\n"), "Ini-S3cret-1"],
    ["a dotenv DB_PASS", j("DB_HOST=db\nDB_PASS=", "Dot-Env-S3cret", "\n"), "Dot-Env-S3cret"],
    ["a YAML pwd", j('pwd: "', "Y4ml-S3cret", '"'), "Y4ml-S3cret"],
    ["a TOML password", j('password = "', "toml secret words", '"'), "toml secret words"],
    ["a Java property", j("db.password=", "Prop-S3cret"), "Prop-S3cret"],
    [
      "an XML attribute",
      j('<add key="DbPassword" value="x"/><connectionStrings password="', "Xml-S3cret-1", '"/>'),
      "Xml-S3cret-1",
    ],
  ],
  "secret field names": [
    ["a JSON pass", j('{"user": "app", "pass": "', "Json-S3cret-1", '"}'), "Json-S3cret-1"],
    ["a JSON db_pass", j('{"db_pass": "', "Json-S3cret-2", '"}'), "Json-S3cret-2"],
    ["a JSON credentials string", j('{"credentials": "admin:', "Cr3ds-S3cret", '"}'), "Cr3ds-S3cret"],
    ["a JSON auth string", j('{"auth": "svc:', "Auth-S3cret", '"}'), "Auth-S3cret"],

    ["a JSON authorization", j('{"authorization": "', "anything at all", '"}'), "anything at all"],
    ["a JSON private_key", j('{"private_key": "', "plain words too", '"}'), "plain words too"],
    ["a JSON passwd", j('{"passwd": "', "plain words", '"}'), "plain words"],
    ["a JSON pwd", j('{"pwd": "', "Pwd-S3cret-3", '"}'), "Pwd-S3cret-3"],
    ["nested creds", j('{"creds": {"username": "u", "password": "', "nested words", '"}}'), "nested words"],
  ],
  "url paths": [
    [
      "a token after /api/",
      j("https://api.example.com/api/", "9f8e7d6c5b4a39281706f5e4d3c2b1a0", "/status"),
      "9f8e7d6c5b4a39281706f5e4d3c2b1a0",
    ],
    [
      "a token after /token/",
      j("https://app.example.com/reset/token/", "Zx9Yw8Vu7Ts6Rq5Po4Nm"),
      "Zx9Yw8Vu7Ts6Rq5Po4Nm",
    ],
    [
      "a token after /hooks/",
      j("https://example.com/hooks/", "AbC123dEf456GhI789jKl0", "/run"),
      "AbC123dEf456GhI789jKl0",
    ],
    [
      "a token after /keys/",
      j("https://api.example.com/v2/keys/", "k3yAbCdEf0123456789xyz", "/rotate"),
      "k3yAbCdEf0123456789xyz",
    ],
    [
      "a Teams webhook",
      j("https://acme.webhook.office.com/webhookb2/", UUID, "@", UUID, "/IncomingWebhook/", HEX32, "/", UUID),
      HEX32,
    ],
    [
      "a Telegram bot token",
      j("https://api.telegram.org/bot", "123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsawz", "/sendMessage"),
      "AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsawz",
    ],
    ["a token after /api/ in a log line", j("GET /api/", B62_60.slice(0, 40), " 200"), B62_60.slice(0, 40)],
  ],
  "vault placeholders": [
    ["a vault template", "{{vault:kv/records#token}}", "kv/records"],
    ["a secrets template", "${secrets.RECORDS_TOKEN}", "secrets.RECORDS"],
    ["a GitHub Actions secret", "${{ secrets.GITHUB_TOKEN }}", "secrets.GITHUB"],
    ["a Jinja secrets template", "{{ secrets.RECORDS_TOKEN }}", "secrets.RECORDS"],
    ["a 1Password reference", "op://Private/records/credential", "Private/records"],
    ["a bank-vaults reference", "vault:secret/data/accounts/aws#AWS_SECRET_ACCESS_KEY", "secret/data"],
    ["an AWS Secrets Manager ARN", "arn:aws:secretsmanager:us-east-1:123456789012:secret:prod/db-AbCdEf", "prod/db"],
    ["a CloudFormation dynamic reference", "{{resolve:secretsmanager:MySecret:SecretString:password}}", "MySecret"],
    ["a CloudFormation secure SSM reference", "{{resolve:ssm-secure:/prod/db/password:1}}", "/prod/db"],
    ["a Doppler URI", "doppler://myapp/prd", "myapp/prd"],
    ["a Doppler template", '{{ doppler "DATABASE_URL" }}', "DATABASE_URL"],
    ["an Infisical URI", "infisical://app.infisical.com/7e2f1a4c?env=dev", "7e2f1a4c"],
    ["a Berglas reference", "sm://my-project/db-password", "my-project"],
    ["a GCP secrets-init reference", "gcp:secretmanager:projects/p1/secrets/db/versions/latest", "secrets/db"],
    [
      "an Azure Key Vault reference",
      "@Microsoft.KeyVault(SecretUri=https://kv.vault.azure.net/secrets/db/)",
      "kv.vault.azure.net",
    ],
    ["a Dokploy vault template", "DATABASE_URL=${{vault.doppler-prd.DATABASE_URL}}", "doppler-prd"],
  ],
  "more provider tokens": [
    ["a Doppler personal token", j("dp.pt.", B62_60.slice(0, 43)), B62_60.slice(0, 43)],
    ["a Doppler service token", j("dp.st.prd.", B62_60.slice(0, 40)), B62_60.slice(0, 40)],
    ["a 1Password service account token", j("ops_eyJ", B62_60, B62_60), B62_60],
    ["a Grafana service account token", j("glsa_", A36, "_", HEX32.slice(0, 8)), A36],
    ["a Grafana cloud token", j("glc_", B62_60), B62_60],
    ["a Sentry org token", j("sntrys_", "eyJpYXQiOjE2ODQ5", B62_60), B62_60],
    ["a Postman key", j("PMAK-", HEX32.slice(0, 24), "-", HEX32, "ab"), HEX32],
    ["an Atlassian token", j("ATATT3", B62_60, B62_60, B62_60, "xFfGF0"), B62_60],
    ["a Fly.io token", j("fo1_", B62_60.slice(0, 43)), B62_60.slice(0, 43)],
    ["a Dynatrace token", j("dt0c01.", B62_60.slice(0, 24), ".", HEX64), HEX64],
    ["an EasyPost key", j("EZAK", B62_60.slice(0, 54)), B62_60.slice(0, 54)],
    ["an Artifactory key", j("AKCp", B62_60, B62_60.slice(0, 9)), B62_60],
    ["a Pulumi token", j("pul-", HEX32, "01234567"), HEX32],
    ["a New Relic user key", j("NRAK-", "ABCDEFGHIJKLMNOPQRSTUVWXYZ1"), "ABCDEFGHIJKLMNOPQRSTUVWXYZ1"],
    ["our invitation token", j("rci_", A36, "AbCdEfG"), A36],
    ["a Slack user token", j("xoxp-", "123456789012-1234567890123-", "AbCdEfGhIjKl"), "1234567890123-"],
    ["a Stripe restricted key", j("rk_", "live_", "4eC39HqLyjWDarjtT1zdp7dc"), "4eC39HqLyjWDarjtT1zdp7dc"],
    ["a GitLab runner token", j("glrt-", "xYz0123456789abcdEFGH"), "xYz0123456789abcdEFGH"],
    ["a Groq key", j("gsk_", B62_60.slice(0, 52)), B62_60.slice(0, 52)],
    ["a Linear key", j("lin_api_", B62_60.slice(0, 40)), B62_60.slice(0, 40)],
    ["a Shopify token", j("shpat_", HEX32), HEX32],
    ["a PyPI token", j("pypi-AgEIcHlwaS5vcmc", B62_60), B62_60],
    ["a Databricks token", j("dapi", HEX32), HEX32],
    ["an AWS session key id", j("ASIA", "Y34FZKBOKMUTVV7A"), "Y34FZKBOKMUTVV7A"],
    ["an Anthropic admin key", j("sk-", "ant-admin01-", B62_60), B62_60],
  ],
};

/** Each value holds one secret, named by `secret`: after redaction that text is gone. */
export const MUST_REDACT: Shape[] = Object.values(SHAPE_FAMILIES).flat();

/** Values with nothing secret in them: they must come out unchanged. */
export const LOOK_ALIKES: Array<[string, unknown]> = [
  [
    "token counts",
    { token_count: 5, input_tokens: 2648, max_tokens: 1024, tokens_before: 180000, tokenizer: "cl100k_base" },
  ],
  [
    "names that contain a secret word",
    {
      secret_name: "GITHUB_TOKEN",
      password_policy: "min 12",
      credential_id: "cred-123",
      token_type: "bearer",
      token_url: "https://id.example.com/token",
      private_key_id: "k-1",
      aws_access_key_id_ref: "ref",
    },
  ],
  [
    "ids and digests",
    {
      id: "evt-0001",
      task: "bench-task-0024",
      sha256: "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
      uuid: "0b6c7a2e-4c1f-4e8a-9d3b-2f1e0a9c8b7d",
    },
  ],
  [
    "hosts and URLs without credentials",
    {
      host: "records.internal.example",
      url: "https://records.example.com/lookup?id=42&page=2#top",
      s3: "s3://inbox/case-918.pdf",
    },
  ],
  [
    "prose about authentication",
    { note: "The records API uses Bearer authentication. Basic authentication is disabled. Token auth is next." },
  ],
  [
    "words and settings",
    { mask: "mask-layer", skip: "skip_live_tests", region: "Asia/Tokyo", vault: "see vault docs", password: "" },
  ],
  ["public keys and certificates", { pub: pem("PUBLIC KEY"), cert: pem("CERTIFICATE") }],
  ["a password prompt", { prompt: "password: required", label: "Password: ********" }],
  [
    "a header pair that is not secret",
    {
      headers: [
        ["Accept", "application/json"],
        ["Content-Type", "text/plain"],
      ],
    },
  ],
  ["a name/value pair that is not secret", { headers: [{ name: "User-Agent", value: "runtime/1.2.3" }] }],
  ["JSON in a string without secrets", { arguments: '{"query": "case 918", "limit": 10}' }],
  ["numbers and booleans", { enabled: true, limits: [1, 2, 3], nothing: null, ratio: 0.25 }],
  ["short sk- and eyJ strings", { a: "sk-short", b: "eyJ.eyJ.x", c: "ghp_short" }],
  ["an upper-case word that starts like an AWS id", { code: "ASIAPACIFICREGIONCODE1" }],
  [
    "credential names and references",
    {
      credential_ref: "records-api",
      credentials_ref: "vault-ref-2",
      credentials: ["records-api", "storage"],
      policy: {
        credentials: [
          { name: "records-api", type: "environment_variable", allowed_hosts: ["records.example.com"], ttl: "15m" },
        ],
      },
    },
  ],
  [
    "words that hold pass, pwd or auth",
    {
      auth_method: "oauth2",
      auth: "oauth2",
      pass_count: 3,
      pass: 2,
      passage: "chapter-2 line 7",
      compass: "N-42",
      result: "pass",
      pwd: "/workspace/app",
      bypass: "cache-v2",
      fetch: { credentials: "same-origin", auth: "none" },
    },
  ],
  [
    "ids in URL paths",
    {
      task: `https://custody.example.com/api/v1/tasks/${UUID}/timeline`,
      api_uuid: `https://x.example.com/api/${UUID}`,
      kms: `arn:aws:kms:us-east-1:123456789012:key/${UUID}`,
      blob: `https://registry.example.com/v2/app/blobs/sha256:${HEX64}`,
      commit: `https://github.com/acme/repo/commit/${HEX32}01234567`,
      object_id: "https://api.example.com/api/users/507f1f77bcf86cd799439011",
      resource: "https://api.example.com/api/some-long-resource-name-v2/items",
      dated: "https://api.example.com/api/2024-01-01/reports",
      numbered_key: "https://api.github.com/user/keys/1234567890123456789",
      event: "https://custody.example.com/tasks/case-918?event=ev-0001w-90f1ba20",
      idempotency: "https://x.example.com/side-effects/update-record-1?idempotency_key=case-918:update-record-1",
    },
  ],
  [
    "command lines without credentials",
    {
      mkdir: "mkdir -p /tmp/x && ssh -p 2222 deploy@host",
      docker: "docker run -u 1000:1000 -p 8080:80 img",
      prompt: "mysql -u root -p app",
      sort: "sort -u names.txt | tar -xpf a.tar; ls -a; git commit -a -m fix",
      file_flag: "app --password-file /run/secrets/db --token-count 5",
      prose: "run it with --password to be prompted",
      curl_prompt: "curl -u admin https://api.example.com/x",
    },
  ],
  [
    "environment without credentials",
    {
      env: "PWD=/home/app\nOLDPWD=/tmp\nPGPASSFILE=/home/app/.pgpass\nGOOGLE_APPLICATION_CREDENTIALS=/secrets/sa.json",
      refs: "DB_PASS=$DB_PASS_FROM_VAULT MYSQL_PWD=${MYSQL_PWD} PASS=%PASS%",
      templates: "${env:HOME} {{ user.name }} ${HOME} repo:{{org}}/x",
      prose: "auth: none. Pass the token count. Authentication: see the docs.",
    },
  ],
];

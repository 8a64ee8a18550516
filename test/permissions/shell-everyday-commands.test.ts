import { beforeAll, describe, expect, it } from "vitest";
import { checkPermission } from "../../src/permissions/permission-check.js";
import { loadBashParser } from "../../src/permissions/shell-parser.js";

beforeAll(loadBashParser);

/**
 * Typical rules: every plain command, the project's own runners named by the user (as the docs
 * advise: a bare `shell` never lifts a runner), and a few deny rules.
 */
const TYPICAL = {
  allow: [
    "shell",
    "shell(npm test*)",
    "shell(npm ci*)",
    "shell(npm run *)",
    "shell(make *)",
    "shell(python3 *)",
  ],
  ask: [],
  deny: ["shell(rm -rf /*)", "shell(sudo *)", "shell(forbidden*)"],
};

/** Everyday commands an agent runs: false positives matter too. */
const EVERYDAY: string[] = [
  "git status",
  "git status --short",
  "git status -sb",
  "git diff",
  "git diff --stat",
  "git diff --cached",
  "git diff HEAD~1 -- src/",
  "git diff --name-only main...HEAD",
  "git diff --color=always -U5 HEAD",
  "git log --oneline -20",
  "git log -5 --stat",
  "git log --pretty=format:'%h %s' --since='2 weeks ago'",
  "git log --graph --oneline --all --decorate",
  "git log -n 5 --format='%H'",
  "git log --author=alice --no-merges -p -- src/a.ts",
  "git show HEAD",
  "git show --stat HEAD~2",
  "git show HEAD:src/a.ts",
  "git add -A",
  "git add src/a.ts",
  "git commit -m 'fix: handle empty input'",
  'git commit -am "update docs"',
  "git commit --amend --no-edit",
  "git checkout -b feature/x",
  "git checkout -- src/a.ts",
  "git switch main",
  "git switch -c topic",
  "git branch -a",
  "git branch -d old",
  "git branch --show-current",
  "git fetch origin",
  "git fetch --all --prune",
  "git pull --rebase",
  "git pull origin main",
  "git push -u origin feature/x",
  "git push origin HEAD",
  "git push --force-with-lease",
  "git stash",
  "git stash pop",
  "git stash list",
  "git stash show -p stash@{0}",
  "git rev-parse --show-toplevel",
  "git rev-parse --abbrev-ref HEAD",
  "git rev-parse HEAD",
  "git ls-files",
  "git ls-files --others --exclude-standard",
  "git blame -L 10,20 src/a.ts",
  "git grep -n TODO",
  "git grep -n -e foo -- '*.ts'",
  "git remote -v",
  "git remote add upstream https://github.com/o/r.git",
  "git tag -l",
  "git tag -a v1.0 -m 'release 1.0'",
  "git reset --hard HEAD~1",
  "git reset HEAD src/a.ts",
  "git restore --staged src/a.ts",
  "git clone https://github.com/o/r.git",
  "git clone --depth 1 https://github.com/o/r.git dest",
  "git cherry-pick abc123",
  "git merge --no-ff feature",
  "git rebase main",
  "git rebase --continue",
  "git describe --tags --always",
  "git -C sub status",
  "git --no-pager log -1",
  "git init",
  "git rm --cached f",
  "git mv a b",
  "git clean -fd",
  "git worktree list",
  "git shortlog -sn",
  "git cat-file -p HEAD",
  "git log --format='%an' | sort | uniq -c | sort -rn",
  "npm test",
  "npm ci",
  "npm run build",
  "npm test -- --run test/x.test.ts",
  "grep -rn 'TODO' src/",
  "grep -rn --include='*.ts' 'export function' src",
  "grep -E 'a|b' f",
  "grep -c x f",
  "grep -rl foo . | head",
  "sed -n '1,80p' src/a.ts",
  "sed -n '/start/,/end/p' f",
  "sed -i 's/foo/bar/g' config.yaml",
  "sed -e 's/a/b/' -e 's/c/d/' f",
  "sed 's/[[:space:]]*$//' f",
  "sed -E 's/(a|b)/x/g' f",
  "sed '/^$/d' f",
  "sed -n '$p' f",
  "sed '1d' f",
  "sed -i.bak 's/x/y/' f",
  "sed 's/e/E/g' f",
  "sed '/error/d' f",
  "sed -n '/e/p' f",
  "sed 's/x/y/2' f",
  "sed '1i header' f",
  "sed '$a footer' f",
  "sed 'y/abc/xyz/' f",
  "sed -n 'l' f",
  "sed 's#/usr/local#/opt#g' f",
  "sed -e '/^#/d' -e '/^$/d' f",
  "sed -n '10,20{p}' f",
  "sed ':a;N;$!ba;s/\\n/ /g' f",
  "find . -name '*.ts'",
  "find src -type f -newer package.json",
  "find . -maxdepth 2 -type d -name node_modules -prune -o -type f -print",
  "find . -name '*.log' -delete",
  "find . -mtime -1 -type f",
  "find . -iname '*.md' -not -path './node_modules/*'",
  "find . -type f -size +1M",
  "find . -name x -print0",
  "jq '.dependencies' package.json",
  "jq -r '.items[] | .name' data.json",
  "curl -s https://example.com/api",
  "curl -fsSL https://example.com/install.txt -o out.txt",
  "curl -X POST -H 'Content-Type: application/json' -d '{\"a\":1}' https://example.com/api",
  "curl -sS -w '%{http_code}' -o /dev/null https://example.com",
  "curl -I https://example.com",
  "curl --silent --location https://example.com",
  "ls",
  "ls -la src/",
  "cat package.json",
  "head -n 40 src/index.ts",
  "tail -n 20 log.txt",
  "wc -l src/a.ts",
  "sort f | uniq -c | sort -rn",
  "sort -k2 -t, f",
  "sort -u f",
  "sort -n -r f",
  "make",
  "make test",
  "make -j4 build",
  "python3 script.py",
  "python3 -m pytest -q",
  "tar -czf backup.tgz src/",
  "tar -xzf a.tgz -C out",
  "tar xzf a.tgz",
  "tar -tf a.tar",
  "tar --exclude=node_modules -czf a.tgz .",
  "tar cvf out.tar src",
  "awk '{ print $1 }' access.log",
  "awk -F, '{print $2}' f.csv",
  "awk 'NR > 1 { s += $3 } END { print s }' f",
  "awk '$3 > 100' f",
  'awk \'$1 == "x" || $2 == "y"\' f',
  "zip -r out.zip dir",
  "unzip a.zip",
  "diff -u a b",
  "wget -q https://example.com/f -O out",
  "wget https://example.com/f",
  "echo done",
  "printf '%s\\n' a b",
  "printf -v line '%s' x",
  "read -r line < f",
  "test -f x && echo yes",
  "[ -d src ] && ls src",
  "declare -x FOO=bar",
  "mkdir -p out && cp -r src out/",
  "mv a b",
  "touch f",
  "chmod +x run.sh",
  "date",
  "pwd",
  "which node",
  "less -R f",
  "man ls",
  "split -l 100 big.txt part-",
  "wget -nv -np -r https://example.com/docs/",
  "pandoc -s README.md -o README.html",
];

const decide = (command: string, permissions = TYPICAL) =>
  checkPermission(permissions, "shell", { kind: "shell", command });

describe("everyday commands under typical rules", () => {
  it.each(EVERYDAY)("allows %j without a question", (command) => {
    expect(decide(command)).toEqual({ decision: "allow", reason: expect.any(String) });
  });
});

describe("an option not known harmless asks, named in the reason", () => {
  it.each([
    ["git log --ext-diff", "--ext-diff"],
    ["git diff --output=x", "--output"],
    ["git grep -O x", "-O"],
    ["git fetch --upload-pack=x origin", "--upload-pack"],
    ["git clone --template=t https://example.com/r.git", "--template"],
    ["git rebase -x 'make test' main", "-x"],
    ["git config core.pager less", "config"],
    ["git submodule update", "submodule"],
    ["git -c core.pager=less log", "-c"],
    ["git --exec-path=. status", "--exec-path"],
    ["tar -xf a.tar --to-command=x", "--to-command"],
    ["tar -xf host:a.tar", "host:a.tar"],
    ["find . -fprintf out '%p'", "-fprintf"],
    ["find . -newerXY x", "-newerXY"],
    ["sort --compress-program=x f", "--compress-program"],
    ["split --filter=x f", "--filter"],
    ["wget --use-askpass=x https://example.com", "--use-askpass"],
    ["curl -K cfg https://example.com", "-K"],
    ["curl --engine x https://example.com", "--engine"],
    ["rsync -e x a b:c", "-e"],
    ["scp -o ProxyCommand=x a b:c", "-o"],
    ["less +!x f", "+!x"],
    ["man -P x ls", "-P"],
    ["zip -TT x a.zip f", "-TT"],
    ["openssl req -engine x", "-engine"],
    ["apt-get -o APT::Update::Pre-Invoke::=x update", "-o"],
    ["sed -f script.sed f", "-f"],
    ["awk -f prog.awk f", "-f"],
    ["pandoc --lua-f=x.lua a.md", "--lua-filter"],
    ["pandoc -F x a.md", "-F"],
  ])("%j", (command, option) => {
    const verdict = decide(command);
    expect(verdict.decision).toBe("ask");
    expect(verdict.reason).toContain(option);
  });
});

describe("abbreviated long options", () => {
  it.each([
    // Unique prefixes of a dangerous option are that option.
    ["sed --expr='1e x' f", "ask"],
    ["sed --e='1e x' f", "ask"],
    ["split --filt=x f", "ask"],
    ["sort --compress=x f", "ask"],
    ["tar --to-c=x -xf a.tar", "ask"],
    ["wget --use-a=x https://example.com", "ask"],
    // Unique prefixes of a harmless option are harmless; ambiguous ones ask.
    ["sed --quie -n p f", "allow"],
    ["sed --expr='s/a/b/' f", "allow"],
    ["sort --rev f", "allow"],
    ["sort --s f", "ask"],
    ["split --numeric f", "allow"],
    ["git log --onel", "allow"],
    ["git grep --open x", "ask"],
  ])("%j is %s", (command, decision) => {
    expect(decide(command).decision).toBe(decision);
  });
});

describe("names bash evaluates as arithmetic", () => {
  it.each([
    "printf -v 'a[0]' x",
    "read 'a[i]' < f",
    "test -v 'a[x]'",
    "[ -v 'a[x]' ] && echo set",
    '[ -v "$name" ] && echo set',
    "declare 'a[x]=1'",
    "export 'a[x]=1'",
    "unset 'a[x]'",
    "declare -i n=1",
    "local -n ref=x",
    "typeset -A map",
    "command declare -i n=1",
    "RANDOM=42",
    "read OPTIND < f",
  ])("%j asks", (command) => {
    expect(decide(command).decision).toBe("ask");
  });

  it.each(["printf -v out '%s' x", "read -r line < f", "test -v HOME", "declare -x A=1", "declare -p"])(
    "%j stays allowed",
    (command) => {
      expect(decide(command).decision).toBe("allow");
    },
  );
});

describe("program names that are also names of object properties", () => {
  it.each(["constructor -x y", "toString", "__proto__ -a", "hasOwnProperty --x", "git constructor"])(
    "%j is judged, not a crash",
    (command) => {
      expect(["allow", "ask"]).toContain(decide(command).decision);
    },
  );
});

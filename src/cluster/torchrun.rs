//! What torchrun makes of the words and variables its container starts with
//! (pytorch/pytorch `torch/distributed/run.py` `get_args_parser`, `run`,
//! `get_rdzv_endpoint`, and `torch/distributed/argparse_util.py` `env`; read
//! in torch 2.15.0, the same in every 2.x for what is read here):
//!
//! - every option falls back to the variable `PET_<OPTION>` (`--nproc-per-node`
//!   to `PET_NPROC_PER_NODE`), then to its default: `--nnodes` `1:1`,
//!   `--nproc-per-node` `1`, `--rdzv-backend` `static`, `--node-rank` 0,
//!   `--master-addr` `127.0.0.1`, `--master-port` 29500. A flag written on
//!   the command line wins over the variable.
//! - `--standalone` is a c10d rendezvous at `localhost:0`, on one node.
//! - a static rendezvous without `--rdzv-endpoint` meets at
//!   `<master-addr>:<master-port>`, and the node rank is `--node-rank`;
//!   any other backend assigns node ranks as nodes join.
//!
//! torchrun is found as the command itself, as `python -m
//! torch.distributed.run` (or `torch.distributed.launch`, the same parser
//! and agent), or in a `sh -c` script's line.

/// torchrun's `--local-addr` (torch 2.0 and later) as its environment
/// variable. A c10d or etcd rendezvous publishes rank 0's address for the
/// workers' process group: `local_addr`, else `socket.getfqdn()`
/// (torch `distributed/elastic/rendezvous/api.py`
/// `RendezvousStoreInfo.build`, `dynamic_rendezvous.py`
/// `_NodeDescGenerator.generate`). On the host network the fully qualified
/// name is the node's, which cluster DNS (`ClusterFirstWithHostNet`) does
/// not know, so the other pods' workers time out; the pod's IP, which is the
/// node's there, always connects. Without the host network the name is the
/// pod's own, which its headless Service resolves.
pub const LOCAL_ADDR_ENV: &str = "PET_LOCAL_ADDR";

/// How torchrun on one node joins the job.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Launch {
    /// `2`, or `2:8` on an elastic job.
    pub nnodes: String,
    /// `2`, or a word torchrun resolves on the node (`auto`, `gpu`).
    pub nproc_per_node: String,
    /// The node rank of a static rendezvous (else assigned at rendezvous).
    pub node_rank: Option<String>,
    /// `static`, `c10d`, …
    pub backend: String,
    /// `host:port`.
    pub endpoint: String,
}

impl Launch {
    /// The processes of one node, when a number.
    pub fn procs(&self) -> Option<u64> {
        self.nproc_per_node.parse().ok()
    }

    /// The fewest and most nodes as written (`parse_min_max_nnodes`): `2`
    /// is `2:2`.
    pub fn node_bounds(&self) -> (&str, &str) {
        self.nnodes
            .split_once(':')
            .unwrap_or((&self.nnodes, &self.nnodes))
    }

    /// [`Launch::node_bounds`] as numbers.
    pub fn node_range(&self) -> Option<(usize, usize)> {
        let (min, max) = self.node_bounds();
        Some((min.parse().ok()?, max.parse().ok()?))
    }
}

/// Options that take no value.
const FLAGS: &[&str] = &[
    "use_env",
    "standalone",
    "m",
    "module",
    "no_python",
    "run_path",
    "virtual_local_rank",
];

/// torchrun's own options as given (`nproc_per_node`, `2`), and the
/// program it starts with that program's arguments.
type Given = (Vec<(String, String)>, Vec<String>);

/// `words` (what follows `torchrun`) as its options and its program.
fn given(words: &[String]) -> Given {
    let mut given: Vec<(String, String)> = Vec::new();
    let mut rest = words.iter();
    while let Some(word) = rest.next() {
        let Some(option) = word.strip_prefix("--").or_else(|| word.strip_prefix('-')) else {
            // The program: what follows is its own.
            let program = std::iter::once(word).chain(rest).cloned().collect();
            return (given, program);
        };
        let (name, value) = if let Some((name, value)) = option.split_once('=') {
            (name.replace('-', "_"), value.to_owned())
        } else {
            let name = option.replace('-', "_");
            let value = if FLAGS.contains(&name.as_str()) {
                "1".to_owned()
            } else {
                rest.next().cloned().unwrap_or_default()
            };
            (name, value)
        };
        given.push((name, value));
    }
    (given, Vec::new())
}

/// Where in `argv` (which runs torchrun as its command, or through `python
/// -m`) the words of torchrun's node rank option are: `--node_rank=1`,
/// `--node-rank 1`. `None` when `argv` does not run torchrun so; empty when
/// it gives no node rank, which torchrun then reads from `PET_NODE_RANK`.
pub fn node_rank_words(argv: &[String]) -> Option<Vec<usize>> {
    let first = argv.first()?;
    let start = if first.rsplit('/').next() == Some("torchrun") {
        1
    } else if first.rsplit('/').next()?.starts_with("python") {
        python_module(argv)?
    } else {
        return None;
    };
    let mut found = Vec::new();
    let mut at = start;
    while let Some(word) = argv.get(at) {
        let Some(option) = word.strip_prefix("--").or_else(|| word.strip_prefix('-')) else {
            break; // the program
        };
        let (name, inline) = match option.split_once('=') {
            Some((name, _)) => (name.replace('-', "_"), true),
            None => (option.replace('-', "_"), false),
        };
        let takes_value = !inline && !FLAGS.contains(&name.as_str());
        if name == "node_rank" {
            found.push(at);
            if takes_value {
                found.push(at + 1);
            }
        }
        at += if takes_value { 2 } else { 1 };
    }
    Some(found)
}

/// torchrun's option `name` (`nproc_per_node`) as written on `argv`, when
/// `argv` runs torchrun; the last one written wins, as in its parser.
pub fn written(argv: &[String], name: &str) -> Option<String> {
    let (given, _) = given(&torchrun_args(argv)?);
    given
        .into_iter()
        .rev()
        .find(|(n, _)| n == name)
        .map(|(_, v)| v)
}

/// The program torchrun starts in each process, with its arguments, when
/// `argv` runs torchrun.
pub fn program(argv: &[String]) -> Option<Vec<String>> {
    torchrun_args(argv).map(|words| given(&words).1)
}

/// torchrun's settings from `argv` and `env`, when `argv` runs torchrun.
pub fn read(argv: &[String], env: &[(String, String)]) -> Option<Launch> {
    let words = torchrun_args(argv)?;
    let (given, _) = given(&words);
    let option = |name: &str| -> Option<String> {
        let written = given.iter().rev().find(|(n, _)| n == name);
        written.map(|(_, v)| v.clone()).or_else(|| {
            let var = format!("PET_{}", name.to_uppercase());
            env.iter()
                .rev()
                .find(|(n, _)| *n == var)
                .map(|(_, v)| v.clone())
        })
    };
    let standalone = option("standalone").is_some_and(|v| v.parse::<i64>().is_ok_and(|n| n != 0));
    let nnodes = option("nnodes").unwrap_or_else(|| "1:1".to_owned());
    let nproc_per_node = option("nproc_per_node").unwrap_or_else(|| "1".to_owned());
    if standalone {
        return Some(Launch {
            nnodes,
            nproc_per_node,
            node_rank: None,
            backend: "c10d".to_owned(),
            endpoint: "localhost:0".to_owned(),
        });
    }
    let backend = option("rdzv_backend").unwrap_or_else(|| "static".to_owned());
    let endpoint = option("rdzv_endpoint").filter(|e| !e.is_empty());
    let static_backend = backend == "static";
    let endpoint = endpoint.unwrap_or_else(|| {
        let addr = option("master_addr").unwrap_or_else(|| "127.0.0.1".to_owned());
        let port = option("master_port").unwrap_or_else(|| "29500".to_owned());
        if static_backend {
            format!("{addr}:{port}")
        } else {
            String::new()
        }
    });
    Some(Launch {
        nnodes,
        nproc_per_node,
        node_rank: static_backend.then(|| option("node_rank").unwrap_or_else(|| "0".to_owned())),
        backend,
        endpoint,
    })
}

/// The words after `torchrun` (or `python -m torch.distributed.run`) in
/// `argv`, or in the line of a `sh -c` script that runs it.
fn torchrun_args(argv: &[String]) -> Option<Vec<String>> {
    let program = |word: &str| word.rsplit('/').next().unwrap_or(word).to_owned();
    let first = program(argv.first()?);
    if first == "torchrun" {
        return Some(argv[1..].to_vec());
    }
    if first.starts_with("python") {
        return Some(argv[python_module(argv)?..].to_vec());
    }
    if matches!(first.as_str(), "sh" | "bash" | "dash") && argv.get(1).is_some_and(|w| w == "-c") {
        let script = argv.get(2)?;
        return script.lines().rev().find_map(|line| {
            let words = split(line);
            let start = if let Some(at) = words.iter().position(|w| program(w) == "torchrun") {
                at + 1
            } else {
                let python = words
                    .iter()
                    .position(|w| program(w).starts_with("python"))?;
                python + python_module(&words[python..])?
            };
            let end = words[start..]
                .iter()
                .position(|w| matches!(w.as_str(), ";" | "&&" | "||" | "|"))
                .map_or(words.len(), |e| start + e);
            Some(words[start..end].to_vec())
        });
    }
    None
}

/// Where torchrun's words start in `python ... -m torch.distributed.run`,
/// or `torch.distributed.launch`, which is torchrun with one option more
/// (`--use-env`; torch `distributed/launch.py` `get_args_parser`).
fn python_module(argv: &[String]) -> Option<usize> {
    let at = argv.windows(2).position(|w| {
        w[0] == "-m"
            && matches!(
                w[1].as_str(),
                "torch.distributed.run" | "torch.distributed.launch"
            )
    })?;
    Some(at + 2)
}

/// A shell line's words: quotes and backslashes as `sh` reads them;
/// expansions (`$X`, `"$@"`) are left as written.
fn split(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                in_word = true;
                word.extend(chars.by_ref().take_while(|&c| c != '\''));
            }
            '"' => {
                in_word = true;
                while let Some(c) = chars.next() {
                    match c {
                        '"' => break,
                        '\\' => word.extend(chars.next()),
                        c => word.push(c),
                    }
                }
            }
            '\\' => {
                in_word = true;
                word.extend(chars.next());
            }
            '#' if !in_word => break,
            c if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            c => {
                in_word = true;
                word.push(c);
            }
        }
    }
    if in_word {
        words.push(word);
    }
    words
}

#[cfg(test)]
mod tests {
    use super::{Launch, read};

    fn words(text: &str) -> Vec<String> {
        text.split(' ').map(str::to_owned).collect()
    }

    fn env(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn flags_win_over_the_variables_and_the_defaults_fill_the_rest() {
        let launch = read(
            &words("torchrun --nproc_per_node=2 --node-rank 1 train.py --nnodes=9"),
            &env(&[
                ("PET_NNODES", "2"),
                ("PET_NPROC_PER_NODE", "8"),
                ("PET_MASTER_ADDR", "m"),
            ]),
        );
        assert_eq!(
            launch,
            Some(Launch {
                nnodes: "2".to_owned(),
                nproc_per_node: "2".to_owned(),
                node_rank: Some("1".to_owned()),
                backend: "static".to_owned(),
                endpoint: "m:29500".to_owned(),
            })
        );
        let none = read(&words("torchrun train.py"), &[]).unwrap();
        assert_eq!(
            (none.nnodes.as_str(), none.endpoint.as_str()),
            ("1:1", "127.0.0.1:29500")
        );
    }

    #[test]
    fn an_elastic_rendezvous_assigns_node_ranks() {
        let launch = read(
            &words("python3 -u -m torch.distributed.run -m acme.train"),
            &env(&[
                ("PET_RDZV_BACKEND", "c10d"),
                ("PET_RDZV_ENDPOINT", "w-0:23456"),
                ("PET_NODE_RANK", "3"),
                ("PET_NNODES", "2:8"),
            ]),
        )
        .unwrap();
        assert_eq!(launch.node_rank, None);
        assert_eq!(
            (launch.backend.as_str(), launch.endpoint.as_str()),
            ("c10d", "w-0:23456")
        );
        let standalone = read(&words("torchrun --standalone x.py"), &[]).unwrap();
        assert_eq!(standalone.endpoint, "localhost:0");
    }

    #[test]
    fn a_shell_script_is_read_at_its_torchrun_line() {
        let script = "set -e\npip install 'a b'\nexec torchrun --nproc_per_node=1 \"/code/x y.py\" \"$@\" # go";
        let argv = ["sh", "-c", script, "--"].map(str::to_owned);
        let launch = read(&argv, &[]).unwrap();
        assert_eq!(launch.nproc_per_node, "1");
        assert_eq!(read(&words("python train.py"), &[]), None);
        assert_eq!(
            super::split("a 'b c'\\ d \"e\\\"f\" #x"),
            ["a", "b c d", "e\"f"]
        );
    }
}

//! [`Ranks`] over MPI (cargo feature `mpi`: the `mpi` crate over the
//! system's MPI library, e.g. Debian's OpenMPI; building it needs libclang
//! and `mpicc`). The ranks are `MPI_COMM_WORLD`: the processes `mpirun -n
//! N` or `srun` (with an MPI plugin) started. Updates go by
//! `MPI_Alltoallv` after their counts by `MPI_Alltoall`; maxima by
//! `MPI_Allreduce`.

use mpi::collective::SystemOperation;
use mpi::datatype::{Partition, PartitionMut};
use mpi::topology::SimpleCommunicator;
use mpi::traits::{Communicator, CommunicatorCollectives};

use super::ranks::Ranks;

/// This process's end of `MPI_COMM_WORLD` (MPI is finalized when it is
/// dropped).
pub struct MpiRanks {
    _universe: mpi::environment::Universe,
    world: SimpleCommunicator,
    sent: u64,
}

impl MpiRanks {
    /// Initializes MPI, or `None` when it was initialized already.
    pub fn init() -> Option<MpiRanks> {
        let universe = mpi::initialize()?;
        let world = universe.world();
        Some(MpiRanks {
            _universe: universe,
            world,
            sent: 0,
        })
    }

    /// Whether this process was started by an MPI launcher (`mpirun`,
    /// `mpiexec`, or `srun` with PMI/PMIx): its environment names a rank.
    pub fn launched() -> bool {
        ["OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "PMI_RANK"]
            .iter()
            .any(|k| std::env::var_os(k).is_some())
    }
}

impl Ranks for MpiRanks {
    fn rank(&self) -> usize {
        self.world.rank() as usize
    }

    fn transport(&self) -> &'static str {
        "mpi"
    }

    fn ranks(&self) -> usize {
        self.world.size() as usize
    }

    fn exchange(&mut self, out: Vec<Vec<u64>>) -> Result<Vec<Vec<u64>>, String> {
        let n = self.ranks();
        let too_big = |len: usize| format!("a message of {len} words is more than MPI counts");
        let send_counts = out
            .iter()
            .map(|v| i32::try_from(v.len()).map_err(|_| too_big(v.len())))
            .collect::<Result<Vec<i32>, String>>()?;
        let mut recv_counts = vec![0i32; n];
        self.world
            .all_to_all_into(&send_counts[..], &mut recv_counts[..]);
        let displs = |c: &[i32]| -> Vec<i32> {
            c.iter()
                .scan(0i32, |at, &x| {
                    let d = *at;
                    *at += x;
                    Some(d)
                })
                .collect()
        };
        let send: Vec<u64> = out.concat();
        self.sent += 8 * send.len() as u64;
        let total: usize = recv_counts.iter().map(|&c| c as usize).sum();
        i32::try_from(total).map_err(|_| too_big(total))?;
        let mut recv = vec![0u64; total];
        let (sd, rd) = (displs(&send_counts), displs(&recv_counts));
        {
            let p = Partition::new(&send[..], &send_counts[..], &sd[..]);
            let mut q = PartitionMut::new(&mut recv[..], &recv_counts[..], &rd[..]);
            self.world.all_to_all_varcount_into(&p, &mut q);
        }
        Ok(rd
            .iter()
            .zip(&recv_counts)
            .map(|(&d, &c)| recv[d as usize..(d + c) as usize].to_vec())
            .collect())
    }

    fn sent_bytes(&self) -> u64 {
        self.sent
    }

    fn max_all(&mut self, x: &[u64]) -> Result<Vec<u64>, String> {
        let mut out = vec![0u64; x.len()];
        self.world
            .all_reduce_into(x, &mut out[..], SystemOperation::max());
        Ok(out)
    }
}

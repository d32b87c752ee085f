//! Checking and paying for a retry in one step: what every host's
//! `try_withdraw` does, decided once here (docs/breakers-and-budgets.md).

use crate::budget::{Budget, Refusal};
use crate::classify::Category;

impl Budget {
    /// Checks whether a retry after `category` is affordable
    /// ([`check`](Budget::check)) and pays for it when it is
    /// ([`withdraw`](Budget::withdraw)); a refusal is counted
    /// ([`count_refusal`](Budget::count_refusal)) and returned.
    ///
    /// On success returns what `withdraw` returns: the token-bucket cost
    /// taken and whether a concurrency retry slot was taken.
    pub fn try_withdraw(
        &mut self,
        now: u64,
        category: Category,
        refused: bool,
        holds_retry_slot: bool,
    ) -> Result<(Option<u32>, bool), Refusal> {
        if let Err(r) = self.check(now, category, refused, holds_retry_slot) {
            self.count_refusal();
            return Err(r);
        }
        Ok(self.withdraw(now, category, refused, holds_retry_slot))
    }
}

#[cfg(test)]
mod tests {
    use crate::budget::{Budget, BudgetConfig};
    use crate::classify::Category;

    #[test]
    fn try_withdraw_is_check_then_withdraw_and_counts_refusals() {
        let (mut a, mut b) =
            (Budget::new(BudgetConfig::token_bucket()).unwrap(), Budget::new(BudgetConfig::token_bucket()).unwrap());
        let mut refused = 0;
        for i in 0..200u64 {
            let c = if i % 3 == 0 { Category::Timeout } else { Category::ServerError };
            let by_hand = match b.check(i, c, false, false) {
                Ok(()) => Ok(b.withdraw(i, c, false, false)),
                Err(r) => {
                    b.count_refusal();
                    Err(r)
                }
            };
            let got = a.try_withdraw(i, c, false, false);
            refused += usize::from(got.is_err());
            assert_eq!(got, by_hand);
        }
        assert!(refused > 0, "the bucket ran dry at least once");
        assert_eq!((a.refusals(), a.withdrawals()), (b.refusals(), b.withdrawals()));
        assert_eq!(a.refusals(), refused as u64);
    }
}
